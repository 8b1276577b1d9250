//! The permutation search on the GPU (`combinatorics_search_permutations_f64` in
//! kernels-cuda/combinatorics.cu) and the reduction of its per-block bests. A leaf: it imports
//! only the generated launchers and the shared order of results.

use gpu_runtime::{Gpu, GpuError};

use super::best::better;
use crate::kernels::{self, COMB_MAX_N, SEARCH_MAX_BLOCK};

/// GPU threads per block of the search kernel: the kernel's shared arrays hold
/// `SEARCH_MAX_BLOCK` entries and its reduction needs a power of two.
const GPU_BLOCK: u32 = SEARCH_MAX_BLOCK;
const _: () = assert!(GPU_BLOCK.is_power_of_two());

/// Consecutive ranks each GPU thread scores per tile (one unrank each).
const GPU_STEPS: u32 = 64;

/// The best `(score, rank)` among the ranks `[start, start + count)` (`count >= 1`, inside
/// `n!`, `n <= 20`, the `n x n` matrix `m` validated).
pub(super) fn search(
    gpu: &Gpu,
    tour: bool,
    n: usize,
    m: &[f64],
    start: u64,
    count: u64,
) -> Result<(f64, u64), GpuError> {
    if n == 0 {
        return Ok((0.0, 0));
    }
    debug_assert!(n <= COMB_MAX_N as usize && m.len() == n * n);
    let per_tile = GPU_BLOCK as u64 * GPU_STEPS as u64;
    let tiles = count.div_ceil(per_tile);
    // n * n * 8 <= 3,200 bytes of dynamic shared memory.
    let cfg = gpu
        .grid_stride(tiles * GPU_BLOCK as u64, GPU_BLOCK)
        .with_shared_bytes((n * n * 8) as u32);
    let blocks = cfg.grid_dim.0 as usize;
    let dm = gpu.upload(m)?;
    let mut d_score = gpu.alloc_zeros::<f64>(blocks)?;
    let mut d_rank = gpu.alloc_zeros::<u64>(blocks)?;
    // SAFETY: combinatorics_search_permutations_f64 reads m[0 .. n*n) (uploaded, n*n entries) into n*n*8 bytes
    // of dynamic shared memory, scores ranks [start, start + count) (checked to lie below n!,
    // n <= COMB_MAX_N), and writes one entry per block to block_score / block_rank, which hold
    // gridDim.x entries. blockDim.x = SEARCH_MAX_BLOCK is a power of two, as its reduction
    // requires.
    unsafe {
        kernels::combinatorics_search_permutations_f64(
            gpu,
            cfg,
            &dm,
            n as u32,
            tour as u32,
            start,
            count,
            GPU_STEPS,
            &mut d_score,
            &mut d_rank,
        )?;
    }
    let scores = gpu.download(&d_score)?;
    let ranks = gpu.download(&d_rank)?;
    let best = scores
        .into_iter()
        .zip(ranks)
        .filter(|&(_, r)| r != u64::MAX)
        .fold((f64::INFINITY, u64::MAX), |a, b| {
            if better(b.0, b.1, a.0, a.1) { b } else { a }
        });
    if best.1 == u64::MAX || best.1 < start || best.1 - start >= count {
        return Err(GpuError::LaunchFailed(format!(
            "search kernel returned rank {} outside [{start}, {start} + {count})",
            best.1
        )));
    }
    Ok(best)
}
