//! Batch generation: the permutations of `0..n` with ranks `[start, start + count)`, as a flat
//! buffer of `count * n` bytes, on the CPU (rayon) or the GPU; and streaming to a writer when
//! `n!` permutations do not fit in memory.

use std::io::Write;

use gpu_runtime::{Backend, Exec, Gpu, GpuError, LaunchConfig, Target};
use rayon::prelude::*;

use crate::rank::{MAX_N_U64, factorial_u64, unrank_bytes, unrank_permutation_reference};
use crate::{KERNELS, PermError, next_permutation};

/// From this many permutations `Exec::Auto` uses the GPU (when present). Not measured yet:
/// the development machine has no GPU; the batch bench reports the crossover on one.
pub const BATCH_GPU_THRESHOLD: u64 = 1 << 22;

/// Below this many permutations one thread beats rayon's fork/join.
const PARALLEL_THRESHOLD: u64 = 1 << 14;

/// Permutations per rayon task (one unrank each).
const CHUNK: u64 = 1 << 15;

/// Largest `gpu_steps_per_thread`.
pub const MAX_GPU_STEPS: u32 = 16;

/// GPU threads per block of the batch kernel (a multiple of 4, so that tiles stay 4-aligned).
const GPU_BLOCK: u32 = 128;

/// Most permutation bytes the GPU path keeps on the device at once when it downloads.
const GPU_PIECE_BYTES: u64 = 1 << 28;

/// Tuning of batch generation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BatchOptions {
    /// Permutations each GPU thread produces: it unranks the first, then steps
    /// `next_permutation` `k - 1` times. `1..=16`; default 4 (a few steps per unrank were
    /// fastest on the seed's GPU).
    pub gpu_steps_per_thread: u32,
}

impl Default for BatchOptions {
    fn default() -> Self {
        BatchOptions {
            gpu_steps_per_thread: 4,
        }
    }
}

/// Validates `n` and the range; returns `n!`.
pub(crate) fn check_range(n: usize, start: u64, count: u64) -> Result<u64, PermError> {
    if n > MAX_N_U64 {
        return Err(PermError::TooLarge {
            n,
            max: MAX_N_U64,
            bits: 64,
        });
    }
    let total = factorial_u64(n).unwrap_or(u64::MAX);
    if start.checked_add(count).is_none_or(|end| end > total) {
        return Err(PermError::RangeOutOfBounds {
            start,
            count,
            n,
            total,
        });
    }
    Ok(total)
}

/// Validates `n`, the range and the buffer length; returns `n!`.
fn check_batch(n: usize, start: u64, count: u64, out_len: usize) -> Result<u64, PermError> {
    let total = check_range(n, start, count)?;
    let needed = count as u128 * n as u128;
    if out_len as u128 != needed {
        return Err(PermError::BufferLength {
            len: out_len,
            count,
            n,
            needed,
        });
    }
    Ok(total)
}

/// The reference: unrank every rank on its own with the `O(n^2)` unrank.
///
/// # Complexity
/// `O(count n^2)`.
///
/// # Errors
/// As [`permutations_into`] (without the GPU errors).
///
/// # Examples
/// ```
/// let mut out = vec![0u8; 2 * 3];
/// combinatorics::permutations_into_reference(3, 1, 2, &mut out).unwrap();
/// assert_eq!(out, [0, 2, 1, 1, 0, 2]);
/// ```
pub fn permutations_into_reference(
    n: usize,
    start: u64,
    count: u64,
    out: &mut [u8],
) -> Result<(), PermError> {
    check_batch(n, start, count, out.len())?;
    if n == 0 {
        return Ok(());
    }
    for (r, dst) in (start..start + count).zip(out.chunks_exact_mut(n)) {
        let p = unrank_permutation_reference(n, r as u128)?;
        for (d, e) in dst.iter_mut().zip(p) {
            *d = e as u8;
        }
    }
    Ok(())
}

/// Writes the permutations of `0..n` (as bytes) with lexicographic ranks
/// `[start, start + count)` into `out`, `n` bytes each, where `exec` says.
///
/// The CPU path splits the range into chunks, unranks each chunk's first rank and steps from
/// there; the last four positions of each block of 24 come from a table, so one permutation
/// costs about two stores. The GPU path is [`permutations_on_device`] plus the download (in
/// pieces of at most 256 MiB).
///
/// # Complexity
/// `O(count n)` work; `O(count n / p + (count / chunk) n log n)` time on `p` threads.
///
/// # Errors
/// [`PermError::TooLarge`] when `n > 20`; [`PermError::RangeOutOfBounds`] when
/// `start + count > n!`; [`PermError::BufferLength`] when `out.len() != count * n`;
/// [`PermError::Gpu`] when `exec` asks for a missing GPU or the GPU path fails.
///
/// # Examples
/// ```
/// use combinatorics::permutations_into;
/// use gpu_runtime::Exec;
/// let mut out = vec![0u8; 6 * 3];
/// permutations_into(3, 0, 6, &mut out, Exec::Cpu).unwrap();
/// assert_eq!(&out[..6], &[0, 1, 2, 0, 2, 1]);
/// assert_eq!(&out[15..], &[2, 1, 0]);
/// ```
pub fn permutations_into(
    n: usize,
    start: u64,
    count: u64,
    out: &mut [u8],
    exec: Exec,
) -> Result<Backend, PermError> {
    permutations_into_with(n, start, count, out, exec, &BatchOptions::default())
}

/// [`permutations_into`] with tuning options.
///
/// # Complexity
/// As [`permutations_into`].
///
/// # Errors
/// As [`permutations_into`], and [`PermError::BadOption`] for a step count outside `1..=16`.
///
/// # Examples
/// ```
/// use combinatorics::{permutations_into_with, BatchOptions};
/// use gpu_runtime::Exec;
/// let mut out = vec![0u8; 24 * 4];
/// let opts = BatchOptions { gpu_steps_per_thread: 8 };
/// permutations_into_with(4, 0, 24, &mut out, Exec::Auto, &opts).unwrap();
/// assert_eq!(&out[out.len() - 4..], &[3, 2, 1, 0]);
/// ```
pub fn permutations_into_with(
    n: usize,
    start: u64,
    count: u64,
    out: &mut [u8],
    exec: Exec,
    options: &BatchOptions,
) -> Result<Backend, PermError> {
    check_batch(n, start, count, out.len())?;
    check_steps(options.gpu_steps_per_thread)?;
    match exec.resolve(count, BATCH_GPU_THRESHOLD)? {
        Target::Cpu => {
            fill_cpu(n, start, count, out);
            Ok(Backend::Cpu)
        }
        Target::Cuda(gpu) => {
            fill_gpu(gpu, n, start, count, out, options.gpu_steps_per_thread)?;
            Ok(Backend::Cuda)
        }
    }
}

/// Allocates and returns the permutations with ranks `[start, start + count)` (see
/// [`permutations_into`]).
///
/// # Complexity
/// As [`permutations_into`].
///
/// # Errors
/// As [`permutations_into`], and [`PermError::HostOutOfMemory`] when the buffer cannot be
/// allocated.
///
/// # Examples
/// ```
/// let all = combinatorics::generate_permutations(3, 0, 6, gpu_runtime::Exec::Cpu).unwrap();
/// assert_eq!(all.len(), 18);
/// ```
pub fn generate_permutations(
    n: usize,
    start: u64,
    count: u64,
    exec: Exec,
) -> Result<Vec<u8>, PermError> {
    check_range(n, start, count)?;
    let bytes = count as u128 * n as u128;
    let len = usize::try_from(bytes).map_err(|_| PermError::HostOutOfMemory { bytes })?;
    let mut out = Vec::new();
    out.try_reserve_exact(len)
        .map_err(|_| PermError::HostOutOfMemory { bytes })?;
    out.resize(len, 0);
    permutations_into(n, start, count, &mut out, exec)?;
    Ok(out)
}

/// Generates the permutations with ranks `[start, start + count)` in batches of `batch`
/// permutations and writes each batch's `batch * n` bytes to `writer`, calling
/// `on_batch(done)` after each (for a progress bar). Memory stays at one batch, so this
/// handles ranges far larger than memory (all `12!` permutations are 5.7 GB).
///
/// # Complexity
/// As [`permutations_into`], plus the writes.
///
/// # Errors
/// As [`permutations_into`]; [`PermError::Io`] when a write fails; [`PermError::BadOption`]
/// when `batch` is 0.
///
/// # Examples
/// ```
/// let mut bytes = Vec::new();
/// let mut calls = 0;
/// combinatorics::write_permutations(4, 0, 24, 10, &mut bytes, gpu_runtime::Exec::Cpu, |_| calls += 1)
///     .unwrap();
/// assert_eq!(bytes.len(), 96);
/// assert_eq!(calls, 3);
/// ```
pub fn write_permutations<W: Write>(
    n: usize,
    start: u64,
    count: u64,
    batch: u64,
    writer: &mut W,
    exec: Exec,
    mut on_batch: impl FnMut(u64),
) -> Result<Backend, PermError> {
    check_range(n, start, count)?;
    if batch == 0 {
        return Err(PermError::BadOption {
            name: "batch",
            value: 0,
            min: 1,
            max: u64::MAX,
        });
    }
    let batch = batch.min(count.max(1));
    let buf_len =
        usize::try_from(batch as u128 * n as u128).map_err(|_| PermError::HostOutOfMemory {
            bytes: batch as u128 * n as u128,
        })?;
    let mut buf = Vec::new();
    buf.try_reserve_exact(buf_len)
        .map_err(|_| PermError::HostOutOfMemory {
            bytes: buf_len as u128,
        })?;
    buf.resize(buf_len, 0);
    let mut backend = Backend::Cpu;
    let mut done = 0u64;
    while done < count {
        let m = batch.min(count - done);
        let part = &mut buf[..m as usize * n];
        backend = permutations_into(n, start + done, m, part, exec)?;
        writer.write_all(part)?;
        done += m;
        on_batch(done);
    }
    writer.flush()?;
    Ok(backend)
}

fn check_steps(steps: u32) -> Result<(), PermError> {
    if (1..=MAX_GPU_STEPS).contains(&steps) {
        Ok(())
    } else {
        Err(PermError::BadOption {
            name: "gpu_steps_per_thread",
            value: steps as u64,
            min: 1,
            max: MAX_GPU_STEPS as u64,
        })
    }
}

// ---------------------------------------------------------------- CPU

/// The CPU path; arguments already validated.
fn fill_cpu(n: usize, start: u64, count: u64, out: &mut [u8]) {
    if n == 0 || count == 0 {
        return;
    }
    if count < PARALLEL_THRESHOLD {
        fill_chunk(n, start, out);
        return;
    }
    out.par_chunks_mut(CHUNK as usize * n)
        .enumerate()
        .for_each(|(i, dst)| fill_chunk(n, start + i as u64 * CHUNK, dst));
}

/// Fills `out` (a multiple of `n` bytes) with consecutive permutations from rank `first`.
fn fill_chunk(n: usize, first: u64, out: &mut [u8]) {
    macro_rules! dispatch {
        ($($k:literal)*) => {
            match n {
                $($k => fill_chunk_tail::<$k>(first, out),)*
                _ => fill_chunk_simple(n, first, out),
            }
        };
    }
    dispatch!(5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20)
}

/// Unrank then `next_permutation`: for tiny `n`.
fn fill_chunk_simple(n: usize, first: u64, out: &mut [u8]) {
    let mut cur = [0u8; MAX_N_U64];
    let cur = &mut cur[..n];
    unrank_bytes(n, first, cur);
    let mut chunks = out.chunks_exact_mut(n);
    if let Some(d) = chunks.next() {
        d.copy_from_slice(cur);
    }
    for d in chunks {
        next_permutation(cur);
        d.copy_from_slice(cur);
    }
}

/// The 24 arrangements of 4 positions in lexicographic order.
const TAIL4: [[u8; 4]; 24] = {
    let mut t = [[0u8; 4]; 24];
    let mut r = 0;
    while r < 24 {
        // Unrank r among permutations of 0..4 (factorial base 3! 2! 1!).
        let mut rest = [0u8, 1, 2, 3];
        let mut left = 4;
        let mut rank = r;
        let facts = [6, 2, 1, 1];
        let mut i = 0;
        while i < 4 {
            let d = rank / facts[i];
            rank %= facts[i];
            t[r][i] = rest[d];
            let mut j = d;
            while j + 1 < left {
                rest[j] = rest[j + 1];
                j += 1;
            }
            left -= 1;
            i += 1;
        }
        r += 1;
    }
    t
};

/// Blocks of 24: the first `N - 4` positions are fixed within a block (lexicographic order), the
/// last four run through [`TAIL4`] applied to the block's sorted tail.
#[inline(never)]
fn fill_chunk_tail<const N: usize>(first: u64, out: &mut [u8]) {
    let head = N - 4;
    let mut cur = [0u8; N];
    let mut off = (first % 24) as usize;
    unrank_bytes(N, first - off as u64, &mut cur);
    let mut perms = out.chunks_exact_mut(N);
    loop {
        let tail = [cur[head], cur[head + 1], cur[head + 2], cur[head + 3]];
        let mut tails = [[0u8; 4]; 24];
        for (t, pat) in tails.iter_mut().zip(&TAIL4) {
            *t = [
                tail[pat[0] as usize],
                tail[pat[1] as usize],
                tail[pat[2] as usize],
                tail[pat[3] as usize],
            ];
        }
        for t in &tails[off..] {
            let Some(dst) = perms.next() else { return };
            dst[..head].copy_from_slice(&cur[..head]);
            dst[head..].copy_from_slice(t);
        }
        off = 0;
        // Last permutation of the block (tail descending), then one step.
        cur[head..].reverse();
        if !next_permutation(&mut cur) {
            return;
        }
    }
}

// ---------------------------------------------------------------- GPU

/// Generates the permutations with ranks `[start, start + count)` into a new device buffer of
/// `count * n` bytes, without a host round trip (for chaining GPU work, and for timing the
/// kernel alone). Each GPU thread unranks one rank and steps `next_permutation`
/// `options.gpu_steps_per_thread - 1` times; a block stages its tile in shared memory and
/// writes it out coalesced. Queued on the GPU's stream; not synchronised.
///
/// # Complexity
/// `O(count n)` work, `O(count / k)` unranks of `O(n^2)` each (bit-mask selection).
///
/// # Errors
/// As [`permutations_into_with`]; [`PermError::Gpu`] with
/// [`GpuError::OutOfMemory`] when the buffer does not fit.
///
/// # Examples
/// ```
/// let Ok(gpu) = gpu_runtime::gpu() else { return };
/// let opts = combinatorics::BatchOptions::default();
/// let d = combinatorics::permutations_on_device(gpu, 5, 0, 120, &opts).unwrap();
/// let host = gpu.download(&d).unwrap();
/// assert_eq!(&host[..5], &[0, 1, 2, 3, 4]);
/// ```
pub fn permutations_on_device(
    gpu: &Gpu,
    n: usize,
    start: u64,
    count: u64,
    options: &BatchOptions,
) -> Result<gpu_runtime::cudarc::driver::CudaSlice<u8>, PermError> {
    check_range(n, start, count)?;
    let bytes = count as u128 * n as u128;
    check_steps(options.gpu_steps_per_thread)?;
    // Fails (with sizes) for anything the device cannot hold, so the casts below are exact.
    gpu.ensure_fits(u64::try_from(bytes).unwrap_or(u64::MAX))?;
    // SAFETY: the kernel writes every one of the `count * n` bytes before anyone reads them.
    let mut d = unsafe { gpu.alloc_uninit::<u8>(bytes as usize) }?;
    launch_batch(gpu, &mut d, n, start, count, options.gpu_steps_per_thread)?;
    Ok(d)
}

/// Like [`permutations_on_device`], into an existing device buffer of exactly `count * n`
/// bytes (reuse one buffer across calls; nothing is allocated). Queued on the GPU's stream;
/// not synchronised.
///
/// # Complexity
/// As [`permutations_on_device`].
///
/// # Errors
/// As [`permutations_into_with`] ([`PermError::BufferLength`] when `out` has another length).
///
/// # Examples
/// ```
/// let Ok(gpu) = gpu_runtime::gpu() else { return };
/// let mut d = gpu.alloc_zeros::<u8>(24 * 4).unwrap();
/// combinatorics::permutations_into_device(gpu, 4, 0, 24, &mut d, &Default::default()).unwrap();
/// assert_eq!(&gpu.download(&d).unwrap()[92..], &[3, 2, 1, 0]);
/// ```
pub fn permutations_into_device(
    gpu: &Gpu,
    n: usize,
    start: u64,
    count: u64,
    out: &mut gpu_runtime::cudarc::driver::CudaSlice<u8>,
    options: &BatchOptions,
) -> Result<(), PermError> {
    check_batch(n, start, count, out.len())?;
    check_steps(options.gpu_steps_per_thread)?;
    Ok(launch_batch(
        gpu,
        out,
        n,
        start,
        count,
        options.gpu_steps_per_thread,
    )?)
}

fn launch_batch(
    gpu: &Gpu,
    d: &mut gpu_runtime::cudarc::driver::CudaSlice<u8>,
    n: usize,
    start: u64,
    count: u64,
    steps: u32,
) -> Result<(), GpuError> {
    if n == 0 || count == 0 {
        return Ok(());
    }
    debug_assert!(d.len() as u64 >= count * n as u64);
    let f = gpu.function(&KERNELS, "combinatorics_permutations_u8")?;
    let per_tile = GPU_BLOCK as u64 * steps as u64;
    let tiles = count.div_ceil(per_tile);
    let mut cfg: LaunchConfig = gpu.grid_stride(tiles * GPU_BLOCK as u64, GPU_BLOCK);
    cfg.shared_mem_bytes = (per_tile * n as u64) as u32; // <= 128 * 16 * 20 = 40,960 bytes
    let n32 = n as u32;
    // SAFETY: combinatorics_permutations_u8(u8* out, u32 n, u64 start, u64 count, u32 steps) writes
    // out[0 .. count * n) and nothing else; `d` holds at least that many bytes; n <= 20,
    // 1 <= steps <= 16 and start + count <= n! were checked; the dynamic shared memory is
    // blockDim * steps * n bytes, as the kernel expects.
    unsafe {
        use gpu_runtime::cudarc::driver::PushKernelArg;
        gpu.stream()
            .launch_builder(&f)
            .arg(d)
            .arg(&n32)
            .arg(&start)
            .arg(&count)
            .arg(&steps)
            .launch(cfg)
            .map_err(GpuError::launch)?;
    }
    Ok(())
}

/// The GPU path of [`permutations_into_with`]: pieces of at most [`GPU_PIECE_BYTES`].
fn fill_gpu(
    gpu: &Gpu,
    n: usize,
    start: u64,
    count: u64,
    out: &mut [u8],
    steps: u32,
) -> Result<(), PermError> {
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
        launch_batch(gpu, &mut d, n, start + done, m, steps)?;
        gpu.download_into(&d.slice(..dst.len()), dst)?;
        done += m;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpu_runtime::testing::gpu_for_test;
    use proptest::prelude::*;

    fn reference(n: usize, start: u64, count: u64) -> Vec<u8> {
        let mut v = vec![0u8; count as usize * n];
        permutations_into_reference(n, start, count, &mut v).unwrap();
        v
    }

    #[test]
    fn all_permutations_small_n() {
        for n in 0..=8usize {
            let total = factorial_u64(n).unwrap();
            let got = generate_permutations(n, 0, total, Exec::Cpu).unwrap();
            assert_eq!(got, reference(n, 0, total), "n = {n}");
        }
    }

    #[test]
    fn ranges_at_odd_offsets_and_sizes() {
        for n in [5usize, 7, 9, 12, 20] {
            let total = factorial_u64(n).unwrap();
            for start in [
                0u64,
                1,
                23,
                24,
                25,
                1000,
                total.saturating_sub(1025),
                total - 33,
            ] {
                for count in [
                    0u64, 1, 2, 23, 24, 25, 31, 32, 33, 97, 1023, 1024, 1025, 4099,
                ] {
                    if start + count > total {
                        continue;
                    }
                    let got = generate_permutations(n, start, count, Exec::Cpu).unwrap();
                    assert_eq!(
                        got,
                        reference(n, start, count),
                        "n={n} start={start} count={count}"
                    );
                }
            }
        }
    }

    #[test]
    fn parallel_path_matches_reference() {
        // Several chunks, an unaligned start, a partial last chunk.
        let (n, start, count) = (10usize, 12_345u64, 3 * CHUNK + 777);
        let got = generate_permutations(n, start, count, Exec::Cpu).unwrap();
        assert_eq!(got, reference(n, start, count));
        // The whole of 9! through the parallel path equals stepping next_permutation.
        let all = generate_permutations(9, 0, 362_880, Exec::Cpu).unwrap();
        let mut p: Vec<u8> = (0..9).collect();
        for chunk in all.chunks_exact(9) {
            assert_eq!(chunk, &p[..]);
            next_permutation(&mut p);
        }
    }

    #[test]
    fn errors() {
        let mut out = vec![0u8; 12];
        assert!(matches!(
            permutations_into(21, 0, 0, &mut [], Exec::Cpu),
            Err(PermError::TooLarge { .. })
        ));
        assert!(matches!(
            permutations_into(3, 5, 2, &mut out[..6], Exec::Cpu),
            Err(PermError::RangeOutOfBounds { .. })
        ));
        assert!(matches!(
            permutations_into(3, u64::MAX, 2, &mut out[..6], Exec::Cpu),
            Err(PermError::RangeOutOfBounds { .. })
        ));
        assert!(matches!(
            permutations_into(3, 0, 2, &mut out, Exec::Cpu),
            Err(PermError::BufferLength { .. })
        ));
        let bad = BatchOptions {
            gpu_steps_per_thread: 0,
        };
        assert!(matches!(
            permutations_into_with(3, 0, 2, &mut out[..6], Exec::Cpu, &bad),
            Err(PermError::BadOption { .. })
        ));
        assert!(matches!(
            generate_permutations(20, 0, u64::MAX / 2, Exec::Cpu),
            Err(PermError::HostOutOfMemory { .. }) | Err(PermError::RangeOutOfBounds { .. })
        ));
        let mut sink = Vec::new();
        assert!(matches!(
            write_permutations(3, 0, 6, 0, &mut sink, Exec::Cpu, |_| {}),
            Err(PermError::BadOption { .. })
        ));
    }

    #[test]
    fn cuda_without_gpu_is_an_error_not_a_fallback() {
        if gpu_runtime::gpu().is_ok() {
            return; // only meaningful without a GPU
        }
        let mut out = vec![0u8; 6];
        assert!(matches!(
            permutations_into(3, 0, 2, &mut out, Exec::Cuda),
            Err(PermError::Gpu(_))
        ));
    }

    #[test]
    fn streaming_equals_one_buffer() {
        let (n, start, count) = (8usize, 777u64, 20_000u64);
        let mut sink = Vec::new();
        let mut progress = Vec::new();
        write_permutations(n, start, count, 3001, &mut sink, Exec::Cpu, |d| {
            progress.push(d)
        })
        .unwrap();
        assert_eq!(sink, reference(n, start, count));
        assert_eq!(progress.len(), 7);
        assert_eq!(*progress.last().unwrap(), count);
    }

    #[test]
    fn gpu_out_of_memory_is_a_typed_error() {
        let mut out = vec![0u8; 5040 * 7];
        let Some(r) = gpu_runtime::testing::with_simulated_memory_limit(1024, || {
            permutations_into(7, 0, 5040, &mut out, Exec::Cuda)
        }) else {
            return;
        };
        assert!(
            matches!(
                r,
                Err(PermError::Gpu(gpu_runtime::GpuError::OutOfMemory { .. }))
            ),
            "{r:?}"
        );
    }

    #[test]
    fn gpu_batches_equal_cpu_batches() {
        let Some(gpu) = gpu_for_test("gpu_batches_equal_cpu_batches") else {
            return;
        };
        // Under the simulated driver (kernels on one CPU core): batches of a few blocks.
        let batch = gpu_runtime::testing::gpu_test_size(100_000, 5_000) as u64;
        for n in [1usize, 2, 3, 5, 8, 12, 20] {
            let total = factorial_u64(n).unwrap();
            for (start, count) in [
                (0, total.min(batch)),
                (total - total.min(1025), total.min(1025)),
            ] {
                for steps in [1u32, 3, 4, 16] {
                    let opts = BatchOptions {
                        gpu_steps_per_thread: steps,
                    };
                    let mut g = vec![0u8; count as usize * n];
                    let b =
                        permutations_into_with(n, start, count, &mut g, Exec::Cuda, &opts).unwrap();
                    assert_eq!(b, Backend::Cuda);
                    let mut c = vec![0u8; count as usize * n];
                    permutations_into(n, start, count, &mut c, Exec::Cpu).unwrap();
                    assert_eq!(g, c, "n={n} start={start} count={count} steps={steps}");
                }
            }
        }
        // 10! in full (8! under the simulator), several tiles per block and an odd count.
        let n = gpu_runtime::testing::gpu_test_size(10, 8);
        let count = factorial_u64(n).unwrap() - 13;
        let mut g = vec![0u8; count as usize * n];
        permutations_into(n, 13, count, &mut g, Exec::Cuda).unwrap();
        let c = generate_permutations(n, 13, count, Exec::Cpu).unwrap();
        assert_eq!(g, c);
        let count = gpu_runtime::testing::gpu_test_size(1 << 20, 1 << 14) as u64;
        let d = permutations_on_device(gpu, 11, 0, count, &BatchOptions::default()).unwrap();
        let host = gpu.download(&d).unwrap();
        assert_eq!(
            host,
            generate_permutations(11, 0, count, Exec::Cpu).unwrap()
        );
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]
        #[test]
        fn prop_matches_reference(n in 0usize..=20, a in any::<u64>(), count in 0u64..3000) {
            let total = factorial_u64(n).unwrap();
            let count = count.min(total);
            let start = a % (total - count + 1);
            let got = generate_permutations(n, start, count, Exec::Cpu).unwrap();
            prop_assert_eq!(got, reference(n, start, count));
        }
    }
}
