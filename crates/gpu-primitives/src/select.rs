//! Stream compaction (keep the flagged elements) and stable split (partition by a flag).

use gpu_runtime::{DeviceBuffer, Exec, Gpu, GpuError, Target};
use rayon::prelude::*;

use crate::key::Element;
use crate::{GPU_THRESHOLD_STREAM, PARALLEL_THRESHOLD, PrimitiveError};

/// The result of a stable split: `values[..boundary]` are the elements whose flag was `false`
/// (bit 0, predicate false), `values[boundary..]` those whose flag was `true`, each group in
/// input order.
#[derive(Debug, Clone, PartialEq)]
pub struct Split<T> {
    /// The reordered elements.
    pub values: Vec<T>,
    /// Number of elements whose flag was `false`.
    pub boundary: usize,
}

use crate::radix_cpu::SendPtr;

fn chunk_len(n: usize) -> usize {
    n.div_ceil(rayon::current_num_threads().max(1) * 4).max(1)
}

/// Parallel stable compaction: keeps `values[i]` where `keep(i, &values[i])`.
fn select_cpu<T: Copy + Send + Sync>(
    values: &[T],
    keep: impl Fn(usize, &T) -> bool + Sync,
) -> Vec<T> {
    let n = values.len();
    if n < PARALLEL_THRESHOLD {
        return values
            .iter()
            .enumerate()
            .filter(|(i, v)| keep(*i, v))
            .map(|(_, v)| *v)
            .collect();
    }
    let cl = chunk_len(n);
    // Keep per-chunk flags so the predicate runs once per element.
    let parts: Vec<Vec<T>> = values
        .par_chunks(cl)
        .enumerate()
        .map(|(c, chunk)| {
            chunk
                .iter()
                .enumerate()
                .filter(|(j, v)| keep(c * cl + j, v))
                .map(|(_, v)| *v)
                .collect()
        })
        .collect();
    let total: usize = parts.iter().map(Vec::len).sum();
    let mut out: Vec<T> = Vec::with_capacity(total);
    crate::radix_cpu::advise_huge_pages(out.spare_capacity_mut());
    let dst = SendPtr(out.as_mut_ptr());
    let mut offsets = Vec::with_capacity(parts.len());
    let mut acc = 0;
    for p in &parts {
        offsets.push(acc);
        acc += p.len();
    }
    parts
        .par_iter()
        .zip(offsets.par_iter())
        .for_each(|(p, &off)| {
            let d = dst;
            // SAFETY: chunk c writes [off_c, off_c + len_c), disjoint ranges inside capacity
            // `total`; T: Copy so no drops are involved.
            unsafe { std::ptr::copy_nonoverlapping(p.as_ptr(), d.get().add(off), p.len()) };
        });
    // SAFETY: all `total` slots were written above.
    unsafe { out.set_len(total) };
    out
}

/// Parallel stable split: `flag(i, &values[i]) == false` first.
fn split_cpu<T: Copy + Send + Sync>(
    values: &[T],
    flag: impl Fn(usize, &T) -> bool + Sync,
) -> Split<T> {
    let n = values.len();
    if n < PARALLEL_THRESHOLD {
        let mut zeros = Vec::with_capacity(n);
        let mut ones = Vec::new();
        for (i, v) in values.iter().enumerate() {
            if flag(i, v) {
                ones.push(*v);
            } else {
                zeros.push(*v);
            }
        }
        let boundary = zeros.len();
        zeros.extend_from_slice(&ones);
        return Split {
            values: zeros,
            boundary,
        };
    }
    let cl = chunk_len(n);
    let flags: Vec<bool> = values
        .par_iter()
        .enumerate()
        .map(|(i, v)| flag(i, v))
        .collect();
    let ones_per_chunk: Vec<usize> = flags
        .par_chunks(cl)
        .map(|c| c.iter().filter(|&&f| f).count())
        .collect();
    let total_ones: usize = ones_per_chunk.iter().sum();
    let boundary = n - total_ones;
    let mut starts = Vec::with_capacity(ones_per_chunk.len());
    let (mut z, mut o) = (0usize, boundary);
    for (c, &ones) in ones_per_chunk.iter().enumerate() {
        starts.push((z, o));
        let len = cl.min(n - c * cl);
        z += len - ones;
        o += ones;
    }
    let mut out: Vec<T> = Vec::with_capacity(n);
    crate::radix_cpu::advise_huge_pages(out.spare_capacity_mut());
    let dst = SendPtr(out.as_mut_ptr());
    values
        .par_chunks(cl)
        .zip(flags.par_chunks(cl))
        .zip(starts.par_iter())
        .for_each(|((vc, fc), &(mut z, mut o))| {
            let d = dst;
            for (v, &f) in vc.iter().zip(fc) {
                let slot = if f {
                    o += 1;
                    o - 1
                } else {
                    z += 1;
                    z - 1
                };
                // SAFETY: zeros of chunk c go to [z_c, z_c + zeros_c) and ones to
                // [o_c, o_c + ones_c); these ranges partition [0, n).
                unsafe { d.get().add(slot).write(*v) };
            }
        });
    // SAFETY: every slot in [0, n) was written exactly once.
    unsafe { out.set_len(n) };
    Split {
        values: out,
        boundary,
    }
}

/// The reference selection: a sequential filter.
pub fn select_by_flags_reference<T: Copy>(values: &[T], flags: &[bool]) -> Vec<T> {
    flagged(values, flags, true).collect()
}

/// The elements of `values` whose flag is `want`, in order (a sequential filter).
fn flagged<'a, T: Copy>(
    values: &'a [T],
    flags: &'a [bool],
    want: bool,
) -> impl Iterator<Item = T> + 'a {
    values
        .iter()
        .zip(flags)
        .filter(move |(_, f)| **f == want)
        .map(|(v, _)| *v)
}

/// Keeps `values[i]` where `flags[i]` is true, in order (stable stream compaction). The number
/// kept is the length of the result.
///
/// GPU: an exclusive look-back scan of the flags gives each kept element its slot, then one
/// scatter.
///
/// # Complexity
/// `O(n)` work, `O(n / p)` time on `p` threads.
///
/// # Errors
/// [`PrimitiveError::LengthMismatch`] when `flags` and `values` differ in length;
/// [`PrimitiveError::Gpu`] when the GPU path fails.
///
/// # Examples
/// ```
/// use gpu_primitives::{select_by_flags, Exec};
/// let kept = select_by_flags(&[10u32, 11, 12, 13], &[true, false, false, true], Exec::Cpu)?;
/// assert_eq!(kept, vec![10, 13]);
/// # Ok::<(), gpu_primitives::PrimitiveError>(())
/// ```
pub fn select_by_flags<T: Element>(
    values: &[T],
    flags: &[bool],
    exec: Exec,
) -> Result<Vec<T>, PrimitiveError> {
    PrimitiveError::check_len("flags", values.len(), flags.len())?;
    match exec.resolve(values.len() as u64, GPU_THRESHOLD_STREAM)? {
        Target::Cpu => Ok(select_cpu(values, |i, _| flags[i])),
        Target::Cuda(gpu) => {
            if values.is_empty() {
                return Ok(Vec::new());
            }
            let dv = gpu.upload(values)?;
            let df = gpu.upload(flags)?;
            let (out, m) = crate::cuda::select(gpu, &dv, &df)?;
            Ok(gpu.download(&out.slice(0..m))?)
        }
    }
}

/// Keeps the elements for which `keep` is true, in order (stable), using all CPU threads.
///
/// Runs on the CPU only: a Rust closure cannot run on the GPU. For the GPU, compute the flags
/// and call [`select_by_flags`] (or [`crate::device::select_by_flags`]).
///
/// # Complexity
/// `O(n)` predicate calls, `O(n / p)` time on `p` threads.
///
/// # Examples
/// ```
/// use gpu_primitives::compact;
/// assert_eq!(compact(&[1, 2, 3, 4, 5, 6], |x| x % 3 == 0), vec![3, 6]);
/// ```
pub fn compact<T: Copy + Send + Sync>(values: &[T], keep: impl Fn(&T) -> bool + Sync) -> Vec<T> {
    select_cpu(values, |_, v| keep(v))
}

/// The reference split: two sequential filters.
pub fn split_by_flags_reference<T: Copy>(values: &[T], flags: &[bool]) -> Split<T> {
    let mut out: Vec<T> = flagged(values, flags, false).collect();
    let boundary = out.len();
    out.extend(flagged(values, flags, true));
    Split {
        values: out,
        boundary,
    }
}

/// Stable split by a flag array: elements whose flag is `false` first, then those whose flag is
/// `true`, each group in input order (the "split" primitive of GPU Gems 3, chapter 39).
///
/// # Complexity
/// `O(n)` work, `O(n / p)` time on `p` threads; the GPU does one look-back scan and one scatter.
///
/// # Errors
/// [`PrimitiveError::LengthMismatch`] when `flags` and `values` differ in length;
/// [`PrimitiveError::Gpu`] when the GPU path fails.
///
/// # Examples
/// ```
/// use gpu_primitives::{split_by_flags, Exec};
/// let s = split_by_flags(&[1u32, 2, 3, 4], &[true, false, true, false], Exec::Cpu)?;
/// assert_eq!((s.values, s.boundary), (vec![2, 4, 1, 3], 2));
/// # Ok::<(), gpu_primitives::PrimitiveError>(())
/// ```
pub fn split_by_flags<T: Element>(
    values: &[T],
    flags: &[bool],
    exec: Exec,
) -> Result<Split<T>, PrimitiveError> {
    PrimitiveError::check_len("flags", values.len(), flags.len())?;
    match exec.resolve(values.len() as u64, GPU_THRESHOLD_STREAM)? {
        Target::Cpu => Ok(split_cpu(values, |i, _| flags[i])),
        Target::Cuda(gpu) => split_cuda(gpu, values, |_| gpu.upload(flags)),
    }
}

/// The GPU split of `values` by the device flags `flags_of` makes from the uploaded values.
fn split_cuda<T: Element>(
    gpu: &Gpu,
    values: &[T],
    flags_of: impl FnOnce(&DeviceBuffer<T>) -> Result<DeviceBuffer<bool>, GpuError>,
) -> Result<Split<T>, PrimitiveError> {
    if values.is_empty() {
        return Ok(Split {
            values: Vec::new(),
            boundary: 0,
        });
    }
    let dv = gpu.upload(values)?;
    let df = flags_of(&dv)?;
    let (out, boundary) = crate::cuda::split(gpu, &dv, &df)?;
    Ok(Split {
        values: gpu.download(&out)?,
        boundary,
    })
}

/// Stable split by bit `bit` of each element's raw bits (for floats, of `to_bits()`): elements
/// with the bit clear first. One pass of a binary radix sort.
///
/// # Complexity
/// `O(n)` work, `O(n / p)` time on `p` threads.
///
/// # Errors
/// [`PrimitiveError::Gpu`] when the GPU path fails. A `bit` at or above the width of `T`
/// selects nothing (all elements go first), it is not an error.
///
/// # Examples
/// ```
/// use gpu_primitives::{split_by_bit, Exec};
/// let s = split_by_bit(&[5u32, 2, 7, 4], 0, Exec::Cpu)?; // even numbers first
/// assert_eq!((s.values, s.boundary), (vec![2, 4, 5, 7], 2));
/// # Ok::<(), gpu_primitives::PrimitiveError>(())
/// ```
pub fn split_by_bit<T: Element>(
    values: &[T],
    bit: u32,
    exec: Exec,
) -> Result<Split<T>, PrimitiveError> {
    let width = 8 * size_of::<T>() as u32;
    if bit >= width {
        return Ok(Split {
            values: values.to_vec(),
            boundary: values.len(),
        });
    }
    match exec.resolve(values.len() as u64, GPU_THRESHOLD_STREAM)? {
        Target::Cpu => Ok(split_cpu(values, |_, v| raw_bit(v, bit))),
        Target::Cuda(gpu) => {
            split_cuda(gpu, values, |dv| crate::cuda::flags_from_bit(gpu, dv, bit))
        }
    }
}

/// Bit `bit` of an element's raw little-endian bits.
pub(crate) fn raw_bit<T: Element>(v: &T, bit: u32) -> bool {
    let mut b = 0u64;
    // SAFETY: T is one of the sealed 4- or 8-byte plain numbers: every byte is initialised and
    // fits in the 8-byte destination.
    unsafe {
        std::ptr::copy_nonoverlapping(
            (v as *const T).cast::<u8>(),
            (&mut b as *mut u64).cast::<u8>(),
            size_of::<T>(),
        )
    };
    (u64::from_le(b) >> bit) & 1 == 1
}

/// Stable partition by a predicate (CPU only, all threads): elements for which `pred` is
/// `false` first, then those for which it is `true`, each group in input order.
///
/// # Complexity
/// `O(n)` predicate calls, `O(n / p)` time on `p` threads.
///
/// # Examples
/// ```
/// use gpu_primitives::partition;
/// let s = partition(&[3, 8, 1, 6], |&x| x > 4);
/// assert_eq!((s.values, s.boundary), (vec![3, 1, 8, 6], 2));
/// ```
pub fn partition<T: Copy + Send + Sync>(
    values: &[T],
    pred: impl Fn(&T) -> bool + Sync,
) -> Split<T> {
    split_cpu(values, |_, v| pred(v))
}
