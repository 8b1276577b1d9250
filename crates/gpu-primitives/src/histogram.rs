//! Histogram of `u32` keys into bins `0..bins`.

use gpu_runtime::{Exec, Target};
use rayon::prelude::*;

use crate::{GPU_THRESHOLD_STREAM, PARALLEL_THRESHOLD, PrimitiveError};

/// The reference histogram: one sequential loop; `None` when a key is out of range.
pub fn histogram_reference(keys: &[u32], bins: usize) -> Option<Vec<u64>> {
    let mut h = vec![0u64; bins];
    for &k in keys {
        *h.get_mut(k as usize)? += 1;
    }
    Some(h)
}

/// Counts the keys: `result[b]` = number of keys equal to `b`, for `b` in `0..bins` (labels,
/// cluster ids, degrees...). Every key must be below `bins`.
///
/// CPU: per-thread tables merged at the end (one table per thread when `bins` is small compared
/// with `n`, otherwise one sequential pass). GPU: shared-memory counters per block for up to
/// 8192 bins, global atomics above.
///
/// # Complexity
/// `O(n + p * bins)` work on `p` threads, `O(bins)` memory per thread.
///
/// # Errors
/// [`PrimitiveError::ZeroBins`] when `bins == 0` and there are keys;
/// [`PrimitiveError::KeyOutOfRange`] naming the first key `>= bins`; [`PrimitiveError::Gpu`]
/// when the GPU path fails (including `bins > u32::MAX`).
///
/// # Examples
/// ```
/// use gpu_primitives::{histogram, Exec};
/// assert_eq!(histogram(&[0, 2, 2, 1, 2], 4, Exec::Cpu)?, vec![1, 1, 3, 0]);
/// assert!(histogram(&[0, 9], 4, Exec::Cpu).is_err());
/// # Ok::<(), gpu_primitives::PrimitiveError>(())
/// ```
pub fn histogram(keys: &[u32], bins: usize, exec: Exec) -> Result<Vec<u64>, PrimitiveError> {
    if bins == 0 {
        return if keys.is_empty() {
            Ok(Vec::new())
        } else {
            Err(PrimitiveError::ZeroBins)
        };
    }
    let bad = |index: usize| PrimitiveError::KeyOutOfRange {
        index: index as u64,
        key: keys[index],
        bins,
    };
    match exec.resolve(keys.len() as u64, GPU_THRESHOLD_STREAM)? {
        Target::Cpu => {
            let n = keys.len();
            let threads = rayon::current_num_threads().max(1);
            if n < PARALLEL_THRESHOLD || bins.saturating_mul(threads) > n {
                return histogram_reference(keys, bins).ok_or_else(|| {
                    bad(keys.iter().position(|&k| k as usize >= bins).unwrap_or(0))
                });
            }
            if let Some(i) = keys.par_iter().position_first(|&k| k as usize >= bins) {
                return Err(bad(i));
            }
            let chunk = n.div_ceil(threads);
            let h = keys
                .par_chunks(chunk)
                .map(|c| {
                    let mut t = vec![0u64; bins];
                    for &k in c {
                        t[k as usize] += 1;
                    }
                    t
                })
                .reduce_with(|mut a, b| {
                    a.iter_mut().zip(b).for_each(|(x, y)| *x += y);
                    a
                })
                .unwrap_or_else(|| vec![0; bins]);
            Ok(h)
        }
        Target::Cuda(gpu) => {
            let b32 = u32::try_from(bins).map_err(|_| {
                gpu_runtime::GpuError::TooLarge(format!("{bins} bins exceed u32::MAX"))
            })?;
            if keys.is_empty() {
                return Ok(vec![0; bins]);
            }
            let d = gpu.upload(keys)?;
            match crate::cuda::histogram(gpu, &d, b32)? {
                Ok(h) => Ok(h),
                Err(i) => Err(bad(i as usize)),
            }
        }
    }
}
