//! Batch generation: the permutations of `0..n` with ranks `[start, start + count)`, as a flat
//! buffer of `count * n` bytes, on the CPU (rayon) or the GPU; and streaming to a writer when
//! `n!` permutations do not fit in memory.

//!
//! `mod.rs` holds the public API, validation and the `Exec` dispatch; `cpu.rs` the rayon fill;
//! `cuda.rs` the kernel launch (the only file that touches device buffers).

use std::io::Write;

use gpu_runtime::{Backend, DeviceBuffer, Exec, Gpu, Target};

use crate::PermError;
use crate::rank::{MAX_N_U64, factorial_u64, unrank_permutation_reference};

mod cpu;
mod cuda;
#[cfg(test)]
mod tests;

/// From this many permutations `Exec::Auto` uses the GPU (when present). Not measured yet:
/// the development machine has no GPU; the batch bench reports the crossover on one.
pub const BATCH_GPU_THRESHOLD: u64 = 1 << 22;

/// Largest `gpu_steps_per_thread`.
pub const MAX_GPU_STEPS: u32 = 16;

/// Tuning of batch generation.
///
/// Both backends unrank some ranks (the `O(n^2)` factorial decomposition) and step
/// `next_permutation` (amortised `O(1)`) from each to the next ones; the options say how many
/// permutations come from one unrank. The seed (a CUDA kernel with `NEXT_PERM_LOOP` steps per
/// unrank) compared 0, 1 and 9 steps: [`BatchOptions::with_steps`] sets both backends alike.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BatchOptions {
    /// Permutations each GPU thread produces: it unranks the first, then steps
    /// `next_permutation` `k - 1` times. `1..=16`; default 4 (a few steps per unrank were
    /// fastest on the seed's GPU).
    pub gpu_steps_per_thread: u32,
    /// Permutations the CPU path makes from one unrank (it unranks every `k`-th rank from
    /// `start` and steps `next_permutation` `k - 1` times from each), at least 1. `None` (the
    /// default, and the fastest): one unrank per chunk of 32,768, the last four positions of
    /// each block of 24 from a table.
    pub cpu_perms_per_unrank: Option<u64>,
}

impl Default for BatchOptions {
    fn default() -> Self {
        BatchOptions {
            gpu_steps_per_thread: 4,
            cpu_perms_per_unrank: None,
        }
    }
}

impl BatchOptions {
    /// `steps` `next_permutation` steps after each unrank, on both backends (the seed's
    /// `NEXT_PERM_LOOP`): every `(steps + 1)`-th rank is unranked. `steps = 0` unranks every
    /// permutation (the seed's version 1); the GPU takes at most `MAX_GPU_STEPS - 1` steps.
    ///
    /// # Examples
    /// ```
    /// use combinatorics::{permutations_into_with, BatchOptions};
    /// use gpu_runtime::Exec;
    /// let opts = BatchOptions::with_steps(9); // the seed's version 3
    /// assert_eq!(opts.gpu_steps_per_thread, 10);
    /// let mut out = vec![0u8; 24 * 4];
    /// permutations_into_with(4, 0, 24, &mut out, Exec::Cpu, &opts).unwrap();
    /// assert_eq!(&out[out.len() - 4..], &[3, 2, 1, 0]);
    /// ```
    pub fn with_steps(steps: u32) -> Self {
        BatchOptions {
            gpu_steps_per_thread: steps.saturating_add(1),
            cpu_perms_per_unrank: Some(steps as u64 + 1),
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

/// Whether `rows` (rows of `n` bytes) are permutations of `0..n` in strictly increasing
/// lexicographic order, the first one greater than `prev_last` when given: an independent check
/// of generated batches (no ranking, no reference generation). `n` is at most 32.
///
/// # Complexity
/// `O(len(rows))`.
///
/// # Examples
/// ```
/// use combinatorics::lexicographic_rows;
/// assert!(lexicographic_rows(3, &[0, 1, 2, 0, 2, 1], None));
/// assert!(lexicographic_rows(3, &[1, 0, 2], Some(&[0, 2, 1])));
/// assert!(!lexicographic_rows(3, &[0, 0, 2], None)); // not a permutation
/// assert!(!lexicographic_rows(3, &[0, 2, 1, 0, 1, 2], None)); // out of order
/// ```
pub fn lexicographic_rows(n: usize, rows: &[u8], prev_last: Option<&[u8]>) -> bool {
    if n == 0 {
        return true;
    }
    let mut prev = prev_last;
    for row in rows.chunks_exact(n) {
        let mut seen = 0u64;
        for &e in row {
            if e as usize >= n || seen & (1 << e) != 0 {
                return false;
            }
            seen |= 1 << e;
        }
        if prev.is_some_and(|p| p >= row) {
            return false;
        }
        prev = Some(row);
    }
    true
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
/// As [`permutations_into`], and [`PermError::BadOption`] for a GPU step count outside
/// `1..=16` or `cpu_perms_per_unrank` of 0.
///
/// # Examples
/// ```
/// use combinatorics::{permutations_into_with, BatchOptions};
/// use gpu_runtime::Exec;
/// let mut out = vec![0u8; 24 * 4];
/// let opts = BatchOptions { gpu_steps_per_thread: 8, ..Default::default() };
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
    if options.cpu_perms_per_unrank == Some(0) {
        return Err(PermError::BadOption {
            name: "cpu_perms_per_unrank",
            value: 0,
            min: 1,
            max: u64::MAX,
        });
    }
    match exec.resolve(count, BATCH_GPU_THRESHOLD)? {
        Target::Cpu => {
            match options.cpu_perms_per_unrank {
                Some(k) => cpu::fill_steps(n, start, count, out, k),
                None => cpu::fill(n, start, count, out),
            }
            Ok(Backend::Cpu)
        }
        Target::Cuda(gpu) => {
            cuda::fill(gpu, n, start, count, out, options.gpu_steps_per_thread)?;
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

// ---------------------------------------------------------------- device-resident API

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
/// [`GpuError::OutOfMemory`](gpu_runtime::GpuError::OutOfMemory) when the buffer does not fit.
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
) -> Result<DeviceBuffer<u8>, PermError> {
    check_range(n, start, count)?;
    check_steps(options.gpu_steps_per_thread)?;
    Ok(cuda::on_device(
        gpu,
        n,
        start,
        count,
        options.gpu_steps_per_thread,
    )?)
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
    out: &mut DeviceBuffer<u8>,
    options: &BatchOptions,
) -> Result<(), PermError> {
    check_batch(n, start, count, out.len())?;
    check_steps(options.gpu_steps_per_thread)?;
    Ok(cuda::launch(
        gpu,
        out,
        n,
        start,
        count,
        options.gpu_steps_per_thread,
    )?)
}
