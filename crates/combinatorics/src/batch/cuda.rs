//! Batch generation on the GPU (`combinatorics_permutations_u8` in kernels-cuda/combinatorics.cu). A leaf:
//! it imports only the generated launchers; its callers have validated `n`, the range and the
//! step count.

use gpu_runtime::{DeviceBuffer, Gpu, GpuError};

use crate::kernels::{self, COMB_MAX_N};

/// GPU threads per block of the batch kernel (a multiple of 4, so that tiles stay 4-aligned).
const GPU_BLOCK: u32 = 128;
const _: () = assert!(GPU_BLOCK.is_multiple_of(4));

/// Most permutation bytes the GPU path keeps on the device at once when it downloads.
const GPU_PIECE_BYTES: u64 = 1 << 28;

/// A new device buffer holding the `count * n` bytes of the permutations with ranks
/// `[start, start + count)` (queued, not synchronised).
pub(super) fn on_device(
    gpu: &Gpu,
    n: usize,
    start: u64,
    count: u64,
    steps: u32,
) -> Result<DeviceBuffer<u8>, GpuError> {
    let bytes = count as u128 * n as u128;
    // Fails (with sizes) for anything the device cannot hold, so the casts below are exact.
    gpu.ensure_fits(u64::try_from(bytes).unwrap_or(u64::MAX))?;
    // SAFETY: the kernel writes every one of the `count * n` bytes before anyone reads them.
    let mut d = unsafe { gpu.alloc_uninit::<u8>(bytes as usize) }?;
    launch(gpu, &mut d, n, start, count, steps)?;
    Ok(d)
}

/// Queues `combinatorics_permutations_u8` writing the permutations with ranks `[start, start + count)` to
/// `d[0 .. count * n)`.
pub(super) fn launch(
    gpu: &Gpu,
    d: &mut DeviceBuffer<u8>,
    n: usize,
    start: u64,
    count: u64,
    steps: u32,
) -> Result<(), GpuError> {
    if n == 0 || count == 0 {
        return Ok(());
    }
    debug_assert!(d.len() as u64 >= count * n as u64);
    debug_assert!(n <= COMB_MAX_N as usize && steps >= 1);
    let per_tile = GPU_BLOCK as u64 * steps as u64;
    let tiles = count.div_ceil(per_tile);
    // blockDim * steps * n <= 128 * 16 * 20 = 40,960 bytes of dynamic shared memory.
    let cfg = gpu
        .grid_stride(tiles * GPU_BLOCK as u64, GPU_BLOCK)
        .with_shared_bytes((per_tile * n as u64) as u32);
    // SAFETY: combinatorics_permutations_u8 writes out[0 .. count * n) and nothing else; `d` holds at least
    // that many bytes; n <= COMB_MAX_N, 1 <= steps <= 16 and start + count <= n! were checked;
    // the dynamic shared memory is blockDim * steps * n bytes, as the kernel expects.
    unsafe { kernels::combinatorics_permutations_u8(gpu, cfg, d, n as u32, start, count, steps) }
}

/// The GPU path of `permutations_into_with`: pieces of at most [`GPU_PIECE_BYTES`] through one
/// device buffer.
pub(super) fn fill(
    gpu: &Gpu,
    n: usize,
    start: u64,
    count: u64,
    out: &mut [u8],
    steps: u32,
) -> Result<(), GpuError> {
    if n == 0 || count == 0 {
        return Ok(());
    }
    let piece = (GPU_PIECE_BYTES / n as u64).min(count);
    gpu.ensure_fits(piece * n as u64)?;
    // SAFETY: every piece's bytes are written by the kernel before they are downloaded.
    let mut d = unsafe { gpu.alloc_uninit::<u8>((piece * n as u64) as usize) }?;
    let mut done = 0u64;
    for dst in out.chunks_mut((piece * n as u64) as usize) {
        let m = (dst.len() / n) as u64;
        launch(gpu, &mut d, n, start + done, m, steps)?;
        gpu.download_into(&d.slice(..dst.len()), dst)?;
        done += m;
    }
    Ok(())
}
