//! Inclusive and exclusive prefix sums.

use gpu_runtime::{Exec, Target};
use rayon::prelude::*;

use crate::key::Summable;
use crate::{GPU_THRESHOLD_STREAM, PARALLEL_THRESHOLD, PrimitiveError};

/// The reference inclusive scan: `out[i] = values[0] + ... + values[i]`, one sequential loop.
pub fn inclusive_scan_reference<T: Summable>(values: &[T]) -> Vec<T::Sum> {
    let mut acc = T::Sum::default();
    values
        .iter()
        .map(|&x| {
            acc = T::add(acc, x.widen());
            acc
        })
        .collect()
}

/// The reference exclusive scan: `out[i] = values[0] + ... + values[i - 1]` (`out[0] = 0`).
pub fn exclusive_scan_reference<T: Summable>(values: &[T]) -> Vec<T::Sum> {
    let mut acc = T::Sum::default();
    values
        .iter()
        .map(|&x| {
            let before = acc;
            acc = T::add(acc, x.widen());
            before
        })
        .collect()
}

/// Inclusive prefix sums in the accumulator type of `T` (`u32 -> u64`, `i32 -> i64`,
/// `f32 -> f64`, others unchanged; integer sums wrap): `out[i] = values[0] + ... + values[i]`.
///
/// CPU: three phases over one chunk per thread (chunk sums, a scan of the chunk sums, chunk scans
/// seeded with their offsets). GPU: a single-pass decoupled look-back scan (about `2n` data
/// movement). Float results can differ from the sequential reference in the last bits, since
/// partial sums are added in a different order.
///
/// # Complexity
/// `O(n)` work, `O(n / p + p)` time on `p` threads.
///
/// # Errors
/// [`PrimitiveError::Gpu`] when `exec` asks for a GPU that is missing or fails.
///
/// # Examples
/// ```
/// use gpu_primitives::{inclusive_scan, Exec};
/// assert_eq!(inclusive_scan(&[1u32, 2, 3], Exec::Cpu)?, vec![1u64, 3, 6]);
/// # Ok::<(), gpu_primitives::PrimitiveError>(())
/// ```
pub fn inclusive_scan<T: Summable>(
    values: &[T],
    exec: Exec,
) -> Result<Vec<T::Sum>, PrimitiveError> {
    scan(values, true, exec)
}

/// Exclusive prefix sums: `out[i] = values[0] + ... + values[i - 1]`, `out[0] = 0`. Same types,
/// algorithms and rounding remarks as [`inclusive_scan`]. The classic use: turning counts
/// (degrees, bucket sizes) into start offsets.
///
/// # Complexity
/// `O(n)` work, `O(n / p + p)` time on `p` threads.
///
/// # Errors
/// [`PrimitiveError::Gpu`] when `exec` asks for a GPU that is missing or fails.
///
/// # Examples
/// ```
/// use gpu_primitives::{exclusive_scan, Exec};
/// let degrees = [2u32, 0, 3, 1];
/// assert_eq!(exclusive_scan(&degrees, Exec::Cpu)?, vec![0u64, 2, 2, 5]);
/// # Ok::<(), gpu_primitives::PrimitiveError>(())
/// ```
pub fn exclusive_scan<T: Summable>(
    values: &[T],
    exec: Exec,
) -> Result<Vec<T::Sum>, PrimitiveError> {
    scan(values, false, exec)
}

fn scan<T: Summable>(
    values: &[T],
    inclusive: bool,
    exec: Exec,
) -> Result<Vec<T::Sum>, PrimitiveError> {
    match exec.resolve(values.len() as u64, GPU_THRESHOLD_STREAM)? {
        Target::Cpu => Ok(scan_cpu(values, inclusive)),
        Target::Cuda(gpu) => {
            if values.is_empty() {
                return Ok(Vec::new());
            }
            let d = gpu.upload(values)?;
            let out = crate::cuda::scan(gpu, &d, inclusive)?;
            Ok(gpu.download(&out)?)
        }
    }
}

pub(crate) fn scan_cpu<T: Summable>(values: &[T], inclusive: bool) -> Vec<T::Sum> {
    let n = values.len();
    if n < PARALLEL_THRESHOLD {
        return if inclusive {
            inclusive_scan_reference(values)
        } else {
            exclusive_scan_reference(values)
        };
    }
    let chunk = n.div_ceil(rayon::current_num_threads().max(1) * 4);
    let sums: Vec<T::Sum> = values
        .par_chunks(chunk)
        .map(crate::reduce::reduce_sum_reference)
        .collect();
    let mut offsets = Vec::with_capacity(sums.len());
    let mut acc = T::Sum::default();
    for s in sums {
        offsets.push(acc);
        acc = T::add(acc, s);
    }
    // Written in place without zeroing first (one write of the output, not two).
    let mut out: Vec<T::Sum> = Vec::with_capacity(n);
    crate::radix_cpu::advise_huge_pages(out.spare_capacity_mut());
    out.spare_capacity_mut()[..n]
        .par_chunks_mut(chunk)
        .zip(values.par_chunks(chunk))
        .zip(offsets.into_par_iter())
        .for_each(|((o, v), start)| {
            let mut acc = start;
            for (oi, &x) in o.iter_mut().zip(v) {
                if inclusive {
                    acc = T::add(acc, x.widen());
                    oi.write(acc);
                } else {
                    oi.write(acc);
                    acc = T::add(acc, x.widen());
                }
            }
        });
    // SAFETY: the chunks cover [0, n) and every slot was written above.
    unsafe { out.set_len(n) };
    out
}
