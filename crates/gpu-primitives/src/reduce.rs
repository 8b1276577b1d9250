//! Sum, minimum and maximum of a slice.

use gpu_runtime::{Exec, Target};
use rayon::prelude::*;

use crate::key::{SortKey, Summable};
use crate::{GPU_THRESHOLD_STREAM, PARALLEL_THRESHOLD, PrimitiveError};

/// Fixed block length of the CPU sum: blocks are summed sequentially, block sums are added in
/// block order, so the result does not depend on the number of threads.
pub(crate) const SUM_BLOCK: usize = 4096;

/// The reference sum: one sequential loop in the accumulator type.
pub fn reduce_sum_reference<T: Summable>(values: &[T]) -> T::Sum {
    values
        .iter()
        .fold(T::Sum::default(), |a, &x| T::add(a, x.widen()))
}

/// Sum of `values` in the 64-bit accumulator type of `T` (see [`Summable`]).
///
/// Integer sums wrap on overflow (they equal the reference exactly). Float sums (f32 in f64):
/// on the CPU the input is cut into blocks of 4096 elements, each summed sequentially, and the
/// block sums are added in order, so the result is the same for any number of threads; the GPU
/// adds per-thread partial sums in a tree, so float results may differ from the CPU in the last
/// bits.
///
/// # Complexity
/// `O(n)` work, `O(n / p + n / 4096)` time on `p` threads.
///
/// # Errors
/// [`PrimitiveError::Gpu`] when `exec` asks for a GPU that is missing or fails.
///
/// # Examples
/// ```
/// use gpu_primitives::{reduce_sum, Exec};
/// assert_eq!(reduce_sum(&[u32::MAX, 1], Exec::Cpu)?, 1u64 << 32);
/// assert_eq!(reduce_sum(&[0.5f32, 0.25], Exec::Cpu)?, 0.75f64);
/// # Ok::<(), gpu_primitives::PrimitiveError>(())
/// ```
pub fn reduce_sum<T: Summable>(values: &[T], exec: Exec) -> Result<T::Sum, PrimitiveError> {
    match exec.resolve(values.len() as u64, GPU_THRESHOLD_STREAM)? {
        Target::Cpu => Ok(sum_cpu(values)),
        Target::Cuda(_) if values.is_empty() => Ok(T::Sum::default()),
        Target::Cuda(gpu) => {
            let d = gpu.upload(values)?;
            Ok(crate::cuda::sum(gpu, &d)?)
        }
    }
}

pub(crate) fn sum_cpu<T: Summable>(values: &[T]) -> T::Sum {
    if values.len() < PARALLEL_THRESHOLD {
        values
            .chunks(SUM_BLOCK)
            .map(reduce_sum_reference)
            .fold(T::Sum::default(), T::add)
    } else {
        let partials: Vec<T::Sum> = values
            .par_chunks(SUM_BLOCK)
            .map(reduce_sum_reference)
            .collect();
        partials.into_iter().fold(T::Sum::default(), T::add)
    }
}

/// The reference minimum and maximum in the total order of [`SortKey`]; `None` when empty.
pub fn reduce_min_max_reference<K: SortKey>(values: &[K]) -> Option<(K, K)> {
    let mut it = values.iter();
    let first = *it.next()?;
    let (mut lo, mut hi) = (first.to_ordered(), first.to_ordered());
    for &x in it {
        let b = x.to_ordered();
        lo = lo.min(b);
        hi = hi.max(b);
    }
    Some((K::from_ordered(lo), K::from_ordered(hi)))
}

/// Minimum and maximum of `values` in the crate's total order (so for floats `-0.0 < +0.0`
/// and a NaN is the maximum; see [`SortKey`]); `None` when `values` is empty.
///
/// # Complexity
/// `O(n)` work, `O(n / p)` time on `p` threads.
///
/// # Errors
/// [`PrimitiveError::Gpu`] when `exec` asks for a GPU that is missing or fails.
///
/// # Examples
/// ```
/// use gpu_primitives::{reduce_min_max, Exec};
/// assert_eq!(reduce_min_max(&[3i64, -7, 5], Exec::Cpu)?, Some((-7, 5)));
/// assert_eq!(reduce_min_max::<f32>(&[], Exec::Cpu)?, None);
/// # Ok::<(), gpu_primitives::PrimitiveError>(())
/// ```
pub fn reduce_min_max<K: SortKey>(
    values: &[K],
    exec: Exec,
) -> Result<Option<(K, K)>, PrimitiveError> {
    match exec.resolve(values.len() as u64, GPU_THRESHOLD_STREAM)? {
        Target::Cpu => Ok(min_max_cpu(values)),
        Target::Cuda(_) if values.is_empty() => Ok(None),
        Target::Cuda(gpu) => {
            let d = gpu.upload(values)?;
            Ok(crate::cuda::min_max(gpu, &d)?)
        }
    }
}

pub(crate) fn min_max_cpu<K: SortKey>(values: &[K]) -> Option<(K, K)> {
    if values.len() < PARALLEL_THRESHOLD {
        return reduce_min_max_reference(values);
    }
    values
        .par_chunks(1 << 14)
        .filter_map(reduce_min_max_reference)
        .reduce_with(|a, b| {
            (
                K::from_ordered(a.0.to_ordered().min(b.0.to_ordered())),
                K::from_ordered(a.1.to_ordered().max(b.1.to_ordered())),
            )
        })
}

/// Minimum in the total order (see [`reduce_min_max`]); `None` when empty.
///
/// # Complexity
/// `O(n)`.
///
/// # Errors
/// [`PrimitiveError::Gpu`] when the GPU path fails.
///
/// # Examples
/// ```
/// use gpu_primitives::{reduce_min, Exec};
/// assert_eq!(reduce_min(&[0.0f64, -0.0], Exec::Cpu)?.map(f64::to_bits), Some((-0.0f64).to_bits()));
/// # Ok::<(), gpu_primitives::PrimitiveError>(())
/// ```
pub fn reduce_min<K: SortKey>(values: &[K], exec: Exec) -> Result<Option<K>, PrimitiveError> {
    Ok(reduce_min_max(values, exec)?.map(|m| m.0))
}

/// Maximum in the total order (see [`reduce_min_max`]); `None` when empty.
///
/// # Complexity
/// `O(n)`.
///
/// # Errors
/// [`PrimitiveError::Gpu`] when the GPU path fails.
///
/// # Examples
/// ```
/// use gpu_primitives::{reduce_max, Exec};
/// assert_eq!(reduce_max(&[1u32, 9, 4], Exec::Cpu)?, Some(9));
/// # Ok::<(), gpu_primitives::PrimitiveError>(())
/// ```
pub fn reduce_max<K: SortKey>(values: &[K], exec: Exec) -> Result<Option<K>, PrimitiveError> {
    Ok(reduce_min_max(values, exec)?.map(|m| m.1))
}
