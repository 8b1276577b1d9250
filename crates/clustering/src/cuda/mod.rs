//! The CUDA backend: data uploaded once, labels kept on the device, only centroids (up) and
//! the statistics (down) cross the bus each iteration. Kernels in
//! `kernels-cuda/clustering.cu`, launched through their generated typed launchers.
//!
//! **Labels.** Every label is the CPU's ([`crate::assign`]): the centre with the smallest
//! `dist2_f64` (eight interleaved `f64` partial sums, no fused multiply-add), ties to the lower
//! index. The kernels reproduce that distance bit for bit (`__dadd_rn` / `__dmul_rn`), and:
//!
//! - **Direct** (few dimensions or few centres, the CPU's `Method::Direct` shapes, when the
//!   centroids and statistics fit in 48 KiB of shared memory): one thread per point computes
//!   the reference distance to every centroid: exact by construction. One kernel per step plus
//!   the ordered sum of the blocks' partial statistics.
//! - **Product** (the other shapes): for chunks of [`CHUNK`] points, a kernel computes the
//!   product values `e_j = |c_j|^2 - 2 x.c_j` in the element type for tiles of points against
//!   tiles of centres in shared memory and keeps the 4 smallest per point; a second kernel
//!   settles each label exactly as the CPU's engine does (`assign::finish`): with the bound
//!   `err(x) = (3 (d + 8) u + 4 (d + 4) eps64) (|x| + cmax)^2`, a single candidate within
//!   `2 err` of the best is the label, otherwise the candidates within `2 err` are compared by
//!   exact distances; a point whose fourth candidate is that close too is listed, and a third
//!   kernel compares each listed point with every centre, a block per point. After the last
//!   chunk the statistics are added in a fixed order: the points sorted by label
//!   (gpu-primitives' stable radix sort), the sorted order cut into tiles of [`rows_per_tile`]
//!   rows, a block adding each cluster's segment of a tile, then each cluster's segments in
//!   order, all on the device (no round trip through the host). The inertia of such a step is the CPU's formula
//!   (`sum_j q_j - 2 c_j . s_j + w_j |c_j|^2`, `q_j` the weighted `|x|^2` of cluster `j`);
//!   [`Stepper::exact_inertia`] computes the exact one for a fit's result.
//!
//! **Products** ([`Engine`]): cuBLAS where the machine has it and the product is large
//! ([`BLAS_MIN_WORK`]; `gpu_runtime::Blas`: the product
//! matrix of up to [`GRAM_BYTES`] of a chunk's points against every centre, `sgemm`/`dgemm` in
//! the default math mode, then a kernel keeps each point's 4 smallest values; a dot product
//! summed in any order has the bound of the sequential one, so `u` is the type's unit
//! roundoff), CUDA cores (a register-blocked FMA product in the element type, `u` = the type's
//! unit roundoff) or tensor cores: FP64 DMMA for `f64` (IEEE fused
//! multiply-adds; `u = 2^-52`, twice `f64`'s unit for margin), 3xTF32 for `f32` (each operand
//! split into two TF32 parts, three products, float accumulators). For 3xTF32 the bound uses
//! `u = 2^-21`: the dropped low-low product and the two splitting residuals are below
//! `3 * 2^-22 |x_t c_t|` per term (`12 * 2^-24`), and accumulation on tensor cores (products
//! exact, additions truncated: at most `2 * 2^-24` relative per addition, Fasi et al. 2021)
//! over the `3d` products adds at most about `7.5 d * 2^-24 |x| |c|`; `3 (d + 8) * 2^-21`
//! covers both with a wide margin, and so does the CPU's other terms. Plain TF32 (11 bits)
//! would need `u = 2^-11`: most points would fall back to exact distances.
//!
//! **Sums.** On the product path sums, counts and `q` are added in that fixed order: the same
//! bits from run to run for the same labels (no `f64` atomics, which serialise when neighbouring
//! points share a cluster, as in data sorted by class, and whose order changes the last bits).
//! The direct path adds per-block statistics in block order. Both differ from the CPU's
//! reduction tree in the last bits only.

use gpu_primitives::PrimitiveError;
use gpu_runtime::{Blas, DeviceBuffer, Gpu, GpuError, LaunchConfig};

use crate::lloyd::{Candidate, StepStats, Stepper, farthest_points};
use crate::{Element, KMeansError};

#[cfg(test)]
mod tests;

/// The typed launchers of `kernels-cuda/clustering.cu`.
mod kernels {
    gpu_runtime::kernels!("clustering");
}

/// Threads per block of every k-means kernel.
const BLOCK: u32 = kernels::KM_BLOCK;
/// Candidates per point of the product path.
const TOP: usize = kernels::KM_TOP as usize;
/// Dynamic shared memory the direct path may use (the default limit, no opt-in).
const SMALL_SHARED_LIMIT: usize = kernels::KM_SMALL_SHARED_LIMIT as usize;
/// Points per chunk of the product path: the candidate lists of a chunk (`TOP` values and
/// centre indices per point) are all the scratch it needs, whatever `n`.
const CHUNK: u64 = 1 << 20;
/// Tiles of the fixed-order accumulation aimed at for `n` points (a cluster's segments add up
/// to at most this many plus `k` partial sums).
const TARGET_TILES: u64 = 8192;

/// Rows per tile of the fixed-order accumulation for `n` points: at least 256 (a block's eight
/// warps get 32 rows each), more for large `n` so the partial sums stay few.
fn rows_per_tile(n: u64) -> u64 {
    n.div_ceil(TARGET_TILES).max(256)
}

/// Settles per block (groups of 8 lanes, one point each).
const SETTLE_PER_BLOCK: u64 = (kernels::KM_BLOCK / 32 * kernels::SETTLE_PER_WARP) as u64;

/// Shared memory of the direct path for `k` clusters in `d` dimensions: the statistics and the
/// centroids, in `f64`.
fn small_shared_bytes(k: usize, d: usize) -> usize {
    (k * d + k + 2) * 8 + k * d * 8
}

/// Whether a step of `k` centres in `d` dimensions takes the direct path: the shapes where the
/// CPU computes directly too (`assign::method_for`: fewer than 12 dimensions or 16 centres),
/// when they fit in shared memory.
fn direct(d: usize, k: usize) -> bool {
    (d < 12 || k < 16) && small_shared_bytes(k, d) <= SMALL_SHARED_LIMIT
}

/// The product matrix of the cuBLAS engine holds at most this many bytes (and a sixteenth of
/// the device's memory): a chunk's points are multiplied in pieces of that many rows.
const GRAM_BYTES: u64 = 1 << 30;

/// The smallest product (points x centres x dimensions multiply-adds a step) for which k-means
/// loads cuBLAS by itself: loading it is a fixed cost of a fraction of a second per process,
/// which steps this large repay within a few dozen steps through cuBLAS's faster product
/// (BENCHMARKS.md, "k-means products through cuBLAS").
pub(crate) const BLAS_MIN_WORK: u64 = 1 << 36;

/// How the product values are made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Engine {
    /// CUDA cores: fused multiply-adds in the element type.
    Simt,
    /// Tensor cores: FP64 DMMA (`f64`), 3xTF32 (`f32`).
    TensorCores,
    /// cuBLAS (`gpu_runtime::Blas`): the product matrix of a piece of the chunk in the element
    /// type (`sgemm`/`dgemm`, default math mode: IEEE fused multiply-adds in the library's
    /// order), its 4 smallest values per point read by a kernel.
    Blas,
}

impl Engine {
    /// cuBLAS where the machine has it (`Gpu::blas`) and a step's product has at least
    /// [`BLAS_MIN_WORK`] multiply-adds (`work`: points x centres x dimensions); otherwise
    /// warpath's own kernels: tensor cores on the data-centre GPUs whose FP64 tensor cores run
    /// at full rate and whose TF32 rate is several times their FP32 rate (compute capability
    /// 8.0: A100; 9.0: H100, H200; 10.0: B200), CUDA cores elsewhere (8.6, 8.9, 12.x: FP64 at a
    /// small fraction of the FP32 rate either way, TF32 about the FP32 rate, so 3xTF32 would be
    /// slower). `WARPATH_KMEANS_PRODUCT` (`blas`, `simt` or `tensor`) overrides the choice.
    ///
    /// # Errors
    /// [`KMeansError::InvalidParameter`] for another value of `WARPATH_KMEANS_PRODUCT`, or
    /// `blas` where cuBLAS cannot be used (the reason given).
    pub(crate) fn for_device(gpu: &Gpu, work: u64) -> Result<Engine, KMeansError> {
        let choice = std::env::var("WARPATH_KMEANS_PRODUCT").ok();
        Engine::choose(
            gpu.info().compute_capability,
            choice.as_deref(),
            work,
            || gpu.blas().map(|_| ()).map_err(str::to_owned),
        )
    }

    /// [`Engine::for_device`] with the override's value as an argument; `blas` opens cuBLAS
    /// (called only when cuBLAS would be used: loading it takes time).
    fn choose(
        compute_capability: (i32, i32),
        choice: Option<&str>,
        work: u64,
        blas: impl FnOnce() -> Result<(), String>,
    ) -> Result<Engine, KMeansError> {
        let own = match compute_capability {
            (8, 0) | (9, 0) | (10, 0) => Engine::TensorCores,
            _ => Engine::Simt,
        };
        match choice {
            Some("blas") => blas().map(|()| Engine::Blas).map_err(|why| {
                KMeansError::InvalidParameter(format!(
                    "WARPATH_KMEANS_PRODUCT=blas, but cuBLAS cannot be used: {why}"
                ))
            }),
            Some("simt") => Ok(Engine::Simt),
            Some("tensor") => Ok(Engine::TensorCores),
            Some(other) => Err(KMeansError::InvalidParameter(format!(
                "WARPATH_KMEANS_PRODUCT must be blas, simt or tensor, not `{other}`"
            ))),
            None if work >= BLAS_MIN_WORK => Ok(blas().map_or(own, |()| Engine::Blas)),
            None => Ok(own),
        }
    }

    /// The unit roundoff `u` of the error bound for product values of `T` (module docs).
    fn unit<T: Element>(self) -> f64 {
        let single = size_of::<T>() == 4;
        match (self, single) {
            // A dot product rounded in any order has the bound of the sequential one.
            (Engine::Simt | Engine::Blas, true) => f64::from(f32::EPSILON) / 2.0,
            (Engine::Simt | Engine::Blas, false) => f64::EPSILON / 2.0,
            (Engine::TensorCores, true) => 2f64.powi(-21),
            (Engine::TensorCores, false) => f64::EPSILON,
        }
    }
}

/// The buffers of steps with `k` centroids.
struct KBuffers<T> {
    k: usize,
    /// The centroids in `f64` (`k * d`): the reference distances.
    c64: DeviceBuffer<f64>,
    /// The centroids in the element type (product path).
    ct: DeviceBuffer<T>,
    /// `|c_j|^2` in the element type (product path).
    norms: DeviceBuffer<T>,
    /// Statistics: sums, counts, inertia, changed, then `q` (product path).
    stats: DeviceBuffer<f64>,
    /// Per-block statistics (direct path).
    partials: DeviceBuffer<f64>,
    /// Product values of a piece of a chunk (cuBLAS engine; `gram_rows * k`).
    gram: DeviceBuffer<T>,
    /// Candidate values and centres of a chunk (product path).
    top_val: DeviceBuffer<T>,
    top_idx: DeviceBuffer<u32>,
    /// The points of a chunk compared with every centre, and their number (product path).
    fallback: DeviceBuffer<u32>,
    n_fallback: DeviceBuffer<u32>,
    /// Each cluster's first sorted position (`k + 1`, product path).
    starts: DeviceBuffer<u32>,
    /// The partial statistics of the clusters' segments of the tiles (`d + 2` each, at most
    /// tiles + `k` of them).
    acc: DeviceBuffer<f64>,
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
    /// The product engine, chosen on the first product step ([`CudaStepper::product_engine`]):
    /// a fit on the direct path never pays for loading cuBLAS.
    engine: Option<Engine>,
    bufs: Option<KBuffers<T>>,
    /// Points per chunk of the product path ([`CHUNK`]; tests take fewer).
    chunk: u64,
    /// Rows per tile of the fixed-order accumulation ([`rows_per_tile`]; tests take fewer).
    rows: u64,
    /// The most rows of a cuBLAS product ([`GRAM_BYTES`]; tests take fewer).
    gram_limit: u64,
    /// `0 .. n`, the values sorted with the labels (product path, made on its first step).
    iota: Option<DeviceBuffer<u32>>,
    /// Whether the last step's inertia came from the formula (product path).
    formula: bool,
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
            engine: None,
            bufs: None,
            chunk: CHUNK,
            rows: rows_per_tile(n as u64),
            gram_limit: u64::MAX,
            iota: None,
            formula: false,
        })
    }

    /// Uses `engine` for the products from now on (tests run both on one device).
    #[cfg(test)]
    pub(crate) fn set_engine(&mut self, engine: Engine) {
        self.engine = Some(engine);
    }

    /// Runs the product path in chunks of `chunk` points (tests cross chunk boundaries with
    /// small inputs).
    #[cfg(test)]
    pub(crate) fn set_chunk(&mut self, chunk: u64) {
        self.chunk = chunk.max(1);
        self.bufs = None;
    }

    /// Cuts the accumulation's sorted order into tiles of `rows` rows (tests split clusters
    /// across tiles with small inputs).
    #[cfg(test)]
    pub(crate) fn set_rows_per_tile(&mut self, rows: u64) {
        self.rows = rows.max(1);
        self.bufs = None;
    }

    /// Multiplies at most `rows` points at a time on the cuBLAS engine (tests cross the pieces'
    /// boundaries with small inputs).
    #[cfg(test)]
    pub(crate) fn set_gram_rows(&mut self, rows: u64) {
        self.gram_limit = rows.max(1);
        self.bufs = None;
    }

    /// Points of a chunk multiplied at once on the cuBLAS engine for `k` centres: the product
    /// matrix within [`GRAM_BYTES`] and a sixteenth of the device's memory.
    fn gram_rows(&self, k: usize) -> u64 {
        let bytes = GRAM_BYTES.min(self.gpu.info().total_memory / 16);
        let rows = bytes / (k as u64 * size_of::<T>() as u64);
        rows.clamp(1, self.n.min(self.chunk)).min(self.gram_limit)
    }

    /// The product engine for `k` centres ([`Engine::for_device`]), chosen on the first call.
    fn product_engine(&mut self, k: usize) -> Result<Engine, KMeansError> {
        match self.engine {
            Some(e) => Ok(e),
            None => {
                let work = self.n.saturating_mul((k * self.d) as u64);
                let e = Engine::for_device(self.gpu, work)?;
                self.engine = Some(e);
                Ok(e)
            }
        }
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

    /// Blocks of the direct path: enough to fill the device a few times; each block then
    /// streams many points (and adds one row of partial statistics).
    fn grid_small(&self) -> u32 {
        let cfg = self.gpu.grid_stride(self.n, BLOCK);
        cfg.grid_dim
            .0
            .min(self.gpu.info().multiprocessors.max(1) * 4)
    }

    /// Blocks of the settle and exact-inertia kernels for `m` points (grid-stride beyond).
    fn grid_settle(&self, m: u64) -> u32 {
        let sms = u64::from(self.gpu.info().multiprocessors.max(1));
        m.div_ceil(SETTLE_PER_BLOCK).clamp(1, sms * 16) as u32
    }

    /// The buffers for `k` centroids, allocated on the first step with this `k`.
    fn buffers(&mut self, k: usize) -> Result<&mut KBuffers<T>, KMeansError> {
        if self.bufs.as_ref().is_none_or(|b| b.k != k) {
            self.bufs = None;
            let (d, gpu) = (self.d, self.gpu);
            let kd = k * d;
            let blocks = self.grid_small() as usize;
            let chunk = self.n.min(self.chunk) as usize;
            let direct = direct(d, k);
            let (partials, tops, ct) = if direct {
                (blocks * (kd + k + 2), 0, 0)
            } else {
                (0, chunk * TOP, kd)
            };
            let gram = if !direct && self.product_engine(k)? == Engine::Blas {
                self.gram_rows(k) as usize * k
            } else {
                0
            };
            // The accumulation (product path): the sort's copies of labels and values and its
            // scratch (about 2n each), the starts and the segments' partials.
            let (n, segments, ends) = if direct {
                (0, 0, 0)
            } else {
                (
                    self.n as usize,
                    self.n.div_ceil(self.rows) as usize + k,
                    k + 1,
                )
            };
            let elem = size_of::<T>() as u64;
            let bytes = 8 * (kd + kd + 2 * k + 2 + partials) as u64
                + elem * (ct + k + tops + gram) as u64
                + 4 * (tops + tops / TOP + 1) as u64
                + 4 * (n + 6 * n + ends) as u64
                + 8 * (segments * (d + 2)) as u64;
            gpu.ensure_fits(bytes)?;
            self.bufs = Some(KBuffers {
                k,
                c64: gpu.alloc_zeros(kd)?,
                ct: gpu.alloc_zeros(ct)?,
                norms: gpu.alloc_zeros(if direct { 0 } else { k })?,
                stats: gpu.alloc_zeros(kd + 2 * k + 2)?,
                partials: gpu.alloc_zeros(partials)?,
                gram: gpu.alloc_zeros(gram)?,
                top_val: gpu.alloc_zeros(tops)?,
                top_idx: gpu.alloc_zeros(tops)?,
                fallback: gpu.alloc_zeros(tops / TOP)?,
                n_fallback: gpu.alloc_zeros(usize::from(!direct))?,
                starts: gpu.alloc_zeros(ends)?,
                acc: gpu.alloc_zeros(segments * (d + 2))?,
            });
            if !direct && self.iota.is_none() {
                let mut iota = gpu.alloc_zeros::<u32>(n)?;
                gpu_runtime::iota(gpu, &mut iota)?;
                self.iota = Some(iota);
            }
        }
        Ok(self.bufs.as_mut().expect("allocated above"))
    }

    /// One step on the direct path; the statistics (`k * d + k + 2`).
    fn step_direct(&mut self, k: usize) -> Result<Vec<f64>, KMeansError> {
        let (gpu, n, d) = (self.gpu, self.n, self.d);
        let blocks = self.grid_small();
        let stats_len = (k * d + k + 2) as u64;
        let b = self.bufs.as_mut().expect("step allocates the buffers");
        let cfg =
            LaunchConfig::blocks(blocks, BLOCK).with_shared_bytes(small_shared_bytes(k, d) as u32);
        // SAFETY: clustering_kmeans_step_small_T(x[n*d], w[n or 1], has_w, c[k*d], n, d, k,
        // labels[n], partials[grid * (k*d+k+2)]): every buffer has those sizes (x, w and labels
        // from `new`, c and partials from `buffers` for this k and grid), and the dynamic
        // shared memory holds the statistics plus the centroids.
        unsafe {
            kernels::clustering_kmeans_step_small(
                gpu,
                cfg,
                &self.x,
                &self.w,
                self.has_w,
                &b.c64,
                n,
                d as u32,
                k as u32,
                &mut self.labels,
                &mut b.partials,
            )?;
        }
        let mut stats = b.stats.slice_mut(..stats_len as usize);
        // SAFETY: clustering_kmeans_reduce_partials(partials[blocks*stats], blocks, stats,
        // out[stats]): partials holds `blocks` rows of `stats_len`, out holds `stats_len`.
        unsafe {
            kernels::clustering_kmeans_reduce_partials(
                gpu,
                gpu.grid_stride(stats_len, BLOCK),
                &b.partials,
                u64::from(blocks),
                stats_len,
                &mut stats,
            )?;
        }
        Ok(gpu.download(&stats)?)
    }

    /// One step on the product path; the statistics followed by `q` (`k * d + 2k + 2`).
    fn step_product(&mut self, centroids: &[f64], k: usize) -> Result<Vec<f64>, KMeansError> {
        let engine = self.product_engine(k)?;
        let (gpu, n, d, chunk) = (self.gpu, self.n, self.d, self.chunk);
        // The centres in the element type, |c_j|^2 rounded from f64 and the largest norm, as
        // the CPU's engine prepares them (assign::Centres::new).
        let ct: Vec<T> = centroids.iter().map(|&v| T::from_f64(v)).collect();
        let mut cmax2: f64 = 0.0;
        let norms: Vec<T> = centroids
            .chunks_exact(d)
            .map(|c| {
                let s: f64 = c.iter().map(|v| v * v).sum();
                cmax2 = cmax2.max(s);
                T::from_f64(s)
            })
            .collect();
        let cmax = cmax2.sqrt() * (1.0 + 1e-12);
        let unit = engine.unit::<T>();
        let gram_rows = self.gram_rows(k);
        let blas = match engine {
            Engine::Blas => Some(gpu.blas().map_err(|why| {
                GpuError::LaunchFailed(format!("cuBLAS was chosen but cannot be used: {why}"))
            })?),
            _ => None,
        };
        let settle_grid = |m: u64| self.grid_settle(m);
        let grids: Vec<(u64, u64, u32)> = (0..n)
            .step_by(chunk as usize)
            .map(|p0| {
                let m = chunk.min(n - p0);
                (p0, m, settle_grid(m))
            })
            .collect();
        let b = self.bufs.as_mut().expect("step allocates the buffers");
        gpu.upload_into(&ct, &mut b.ct)?;
        gpu.upload_into(&norms, &mut b.norms)?;
        gpu.zero(&mut b.stats)?;
        let (d32, k32) = (d as u32, k as u32);
        for (p0, m, settle_blocks) in grids {
            chunk_tops(gpu, engine, blas, &self.x, b, p0, m, d, k, gram_rows)?;
            gpu.zero(&mut b.n_fallback)?;
            // SAFETY: clustering_kmeans_settle_T(x[n*d], w[n or 1], has_w, c64[k*d],
            // top_val[m*TOP], top_idx[m*TOP], p0, m, d, k, cmax, unit, labels[n],
            // stats[k*d+2k+2], fallback[chunk], n_fallback[1]): points p0..p0+m < n, candidate
            // centres < k (written by the top kernel for every point of the chunk), w read only
            // when has_w, at most m <= chunk points listed.
            unsafe {
                kernels::clustering_kmeans_settle(
                    gpu,
                    LaunchConfig::blocks(settle_blocks, BLOCK),
                    &self.x,
                    &self.w,
                    self.has_w,
                    &b.c64,
                    &b.top_val,
                    &b.top_idx,
                    p0,
                    m,
                    d32,
                    k32,
                    cmax,
                    unit,
                    &mut self.labels,
                    &mut b.stats,
                    &mut b.fallback,
                    &mut b.n_fallback,
                )?;
            }
            // SAFETY: clustering_kmeans_settle_all_T(x[n*d], c64[k*d], fallback[chunk],
            // n_fallback[1], p0, d, k, labels[n], stats[k*d+2k+2]): the settle listed
            // *n_fallback <= m chunk indices, each below m, so p0 + index < n.
            unsafe {
                kernels::clustering_kmeans_settle_all(
                    gpu,
                    LaunchConfig::blocks(settle_blocks, BLOCK),
                    &self.x,
                    &b.c64,
                    &b.fallback,
                    &b.n_fallback,
                    p0,
                    d32,
                    k32,
                    &mut self.labels,
                    &mut b.stats,
                )?;
            }
        }
        self.accumulate(k)?;
        let b = self.bufs.as_mut().expect("step allocates the buffers");
        Ok(gpu.download(&b.stats)?)
    }

    /// The product step's sums, counts and `q` into `stats`, in a fixed order (see the module's
    /// docs and `clustering.cu`): the labels sorted, a block per tile of the sorted order adding
    /// each cluster's segment of it, each cluster's segments added in order; no round trip
    /// through the host.
    fn accumulate(&mut self, k: usize) -> Result<(), KMeansError> {
        let (gpu, n, d, rows) = (self.gpu, self.n, self.d, self.rows);
        let iota = self.iota.as_ref().expect("buffers made 0..n");
        let (sorted, perm) = gpu_primitives::device::radix_sort_pairs(gpu, &self.labels, iota)
            .map_err(|e| match e {
                PrimitiveError::Gpu(g) => KMeansError::from(g),
                other => GpuError::TooLarge(other.to_string()).into(),
            })?;
        let b = self.bufs.as_mut().expect("step allocates the buffers");
        let (k32, d32) = (k as u32, d as u32);
        // SAFETY: clustering_kmeans_starts(sorted[n], n, k, starts[k+1]): the sort's copy of the
        // n labels, and starts sized k + 1 by `buffers`.
        unsafe {
            kernels::clustering_kmeans_starts(
                gpu,
                gpu.grid_stride(k as u64 + 1, BLOCK),
                &sorted,
                n,
                k32,
                &mut b.starts,
            )?;
        }
        let tiles = n.div_ceil(rows);
        let blocks = tiles.min(u64::from(gpu.info().multiprocessors.max(1)) * 16);
        // SAFETY: clustering_kmeans_accumulate_T(x[n*d], w[n or 1], has_w, perm[n], sorted[n],
        // starts[k+1], n, rows, d, acc[(tiles+k)*(d+2)]): perm holds indices below n, sorted
        // labels below k (every point was settled), starts their runs' first positions; the
        // segment of cluster j in tile t writes slot t + j < tiles + k, as `buffers` sized acc.
        unsafe {
            kernels::clustering_kmeans_accumulate(
                gpu,
                LaunchConfig::blocks(blocks as u32, BLOCK),
                &self.x,
                &self.w,
                self.has_w,
                &perm,
                &sorted,
                &b.starts,
                n,
                rows as u32,
                d32,
                &mut b.acc,
            )?;
        }
        // SAFETY: clustering_kmeans_gather(acc[(tiles+k)*(d+2)], starts[k+1], rows, k, d,
        // stats[k*d+2k+2]): cluster j reads the slots t + j of the tiles it spans (written by
        // the accumulation above), stats has the product layout.
        unsafe {
            kernels::clustering_kmeans_gather(
                gpu,
                gpu.grid_stride(k as u64 * (d as u64 + 2), BLOCK),
                &b.acc,
                &b.starts,
                rows as u32,
                k32,
                d32,
                &mut b.stats,
            )?;
        }
        Ok(())
    }
}

/// The candidate lists (`TOP` smallest product values and their centres) of chunk points
/// `p0 .. p0 + m` into `b.top_val` and `b.top_idx`, by `engine`; `blas` is cuBLAS when the
/// engine is [`Engine::Blas`], which multiplies at most `gram_rows` points at a time.
#[allow(clippy::too_many_arguments)]
fn chunk_tops<T: Element>(
    gpu: &Gpu,
    engine: Engine,
    blas: Option<&Blas>,
    x: &DeviceBuffer<T>,
    b: &mut KBuffers<T>,
    p0: u64,
    m: u64,
    d: usize,
    k: usize,
    gram_rows: u64,
) -> Result<(), KMeansError> {
    let (d32, k32) = (d as u32, k as u32);
    let rows = u64::from(match engine {
        Engine::Simt => kernels::SIMT_M,
        Engine::TensorCores if size_of::<T>() == 8 => kernels::MMA_M_F64,
        Engine::TensorCores => kernels::MMA_M_F32,
        Engine::Blas => {
            let blas = blas.ok_or_else(|| GpuError::LaunchFailed("cuBLAS not open".into()))?;
            let sms = u64::from(gpu.info().multiprocessors.max(1));
            // The chunk in pieces of gram_rows points: the product matrix of a piece, then its
            // points' lists, a warp per point.
            for r0 in (0..m).step_by(gram_rows as usize) {
                let rows = gram_rows.min(m - r0);
                let first = ((p0 + r0) as usize) * d;
                let piece = x.slice(first..first + rows as usize * d);
                blas.product_abt(gpu, &piece, &b.ct, d, &mut b.gram)?;
                let blocks = rows.div_ceil(u64::from(BLOCK / 32)).min(sms * 32) as u32;
                // SAFETY: clustering_kmeans_top_rows_T(g[rows*k], norms[k], rows, k, first,
                // top_val[m*TOP], top_idx[m*TOP]): the product holds rows * k values (gram_rows
                // * k allocated), and the lists of chunk points r0 .. r0 + rows <= m <= chunk
                // are written at (r0 + i) * TOP.
                unsafe {
                    kernels::clustering_kmeans_top_rows(
                        gpu,
                        LaunchConfig::blocks(blocks, BLOCK),
                        &b.gram,
                        &b.norms,
                        rows,
                        k32,
                        r0,
                        &mut b.top_val,
                        &mut b.top_idx,
                    )?;
                }
            }
            return Ok(());
        }
    });
    let tiles = LaunchConfig::blocks(m.div_ceil(rows) as u32, BLOCK);
    // The two kernels take the same arguments.
    macro_rules! top {
        ($launch:path) => {
            $launch(
                gpu,
                tiles,
                x,
                &b.ct,
                &b.norms,
                p0,
                m,
                d32,
                k32,
                &mut b.top_val,
                &mut b.top_idx,
            )?
        };
    }
    // SAFETY: clustering_kmeans_top_{simt,mma}_T(x[n*d], ct[k*d], norms[k], p0, m, d, k,
    // top_val[m*TOP], top_idx[m*TOP]): one block per `rows` points of the chunk, every load
    // checked against p0 + m <= n, d and k, and the lists of chunk point i written at i * TOP
    // (m <= chunk points fit the buffers).
    unsafe {
        if engine == Engine::Simt {
            top!(kernels::clustering_kmeans_top_simt);
        } else {
            top!(kernels::clustering_kmeans_top_mma);
        }
    }
    Ok(())
}

impl<T: Element> Stepper for CudaStepper<'_, T> {
    fn dim(&self) -> usize {
        self.d
    }

    fn step(&mut self, centroids: &[f64], k: usize) -> Result<StepStats, KMeansError> {
        let d = self.d;
        let gpu = self.gpu;
        let b = self.buffers(k)?;
        gpu.upload_into(centroids, &mut b.c64)?;
        if self.n == 0 {
            self.formula = false;
            return Ok(StepStats::zeros(k, d));
        }
        let kd = k * d;
        if direct(d, k) {
            let flat = self.step_direct(k)?;
            self.formula = false;
            Ok(StepStats::from_flat(&flat, k, d))
        } else {
            let flat = self.step_product(centroids, k)?;
            self.formula = true;
            let mut st = StepStats::from_flat(&flat[..kd + k + 2], k, d);
            st.inertia = crate::cpu::formula_inertia(&st, &flat[kd + k + 2..], centroids, d);
            Ok(st)
        }
    }

    fn exact_inertia(&mut self, centroids: &[f64], k: usize) -> Result<Option<f64>, KMeansError> {
        if !self.formula || self.n == 0 {
            return Ok(None);
        }
        let (gpu, n, d) = (self.gpu, self.n, self.d);
        let blocks = self.grid_settle(n);
        let mut partials = gpu.alloc_zeros::<f64>(blocks as usize)?;
        self.buffers(k)?;
        let b = self.bufs.as_mut().expect("allocated by buffers");
        gpu.upload_into(centroids, &mut b.c64)?;
        // SAFETY: clustering_kmeans_exact_inertia_T(x[n*d], w[n or 1], has_w, c64[k*d],
        // labels[n], n, d, partials[grid]): the labels of the last step are all below k, and
        // each block writes its own entry of partials.
        unsafe {
            kernels::clustering_kmeans_exact_inertia(
                gpu,
                LaunchConfig::blocks(blocks, BLOCK),
                &self.x,
                &self.w,
                self.has_w,
                &b.c64,
                &self.labels,
                n,
                d as u32,
                &mut partials,
            )?;
        }
        Ok(Some(gpu.download(&partials)?.iter().sum()))
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
