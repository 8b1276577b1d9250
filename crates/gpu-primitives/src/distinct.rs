//! Distinct (unique) values with optional counts and inverse indices.

use gpu_runtime::{Backend, Exec, Gpu, Target};
use rayon::prelude::*;

use crate::key::{RadixBits, SortKey};
use crate::radix_cpu::PARALLEL_SORT;
use crate::sort::{argsort_cpu, sorted_bits_cpu};
use crate::{GPU_THRESHOLD_SORT, PrimitiveError};

/// What [`distinct_with`] computes besides the values.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DistinctOptions {
    /// Also return how many times each distinct value occurs.
    pub counts: bool,
    /// Also return, for every input position, the index of its value in `values`.
    pub inverse: bool,
}

/// The result of [`distinct_with`] / [`distinct_sorted`].
#[derive(Debug, Clone, PartialEq)]
pub struct Distinct<K> {
    /// The distinct keys, ascending in the total order of [`SortKey`].
    pub values: Vec<K>,
    /// `counts[j]` = occurrences of `values[j]` (when asked for).
    pub counts: Option<Vec<u64>>,
    /// `values[inverse[i]]` is `keys[i]` (bitwise) for every input position `i` (when asked
    /// for).
    pub inverse: Option<Vec<u32>>,
    /// Where it ran.
    pub backend: Backend,
}

/// The reference: sort a copy, deduplicate, count, and binary-search every key for its index.
pub fn distinct_reference<K: SortKey>(keys: &[K]) -> (Vec<K>, Vec<u64>, Vec<u32>) {
    let mut bits: Vec<K::Bits> = keys.iter().map(|k| k.to_ordered()).collect();
    bits.sort();
    let mut values: Vec<K::Bits> = Vec::new();
    let mut counts: Vec<u64> = Vec::new();
    for b in bits {
        if values.last() == Some(&b) {
            *counts.last_mut().expect("same length as values") += 1;
        } else {
            values.push(b);
            counts.push(1);
        }
    }
    let inverse = keys
        .iter()
        .map(|k| values.binary_search(&k.to_ordered()).unwrap_or(0) as u32)
        .collect();
    (
        values.into_iter().map(K::from_ordered).collect(),
        counts,
        inverse,
    )
}

/// The distinct keys of `keys`, ascending in the total order of [`SortKey`] (floats: `-0.0`
/// and `+0.0` are different keys; NaNs are equal only when their bits are).
///
/// Works on any input order; see [`distinct_with`] for the algorithms.
///
/// # Complexity
/// `O(n)` for already sorted input or integers in a small range, otherwise a radix sort:
/// `O(n * w / 8)`.
///
/// # Errors
/// [`PrimitiveError::Gpu`] when the GPU path fails.
///
/// # Examples
/// ```
/// use gpu_primitives::{distinct, Exec};
/// assert_eq!(distinct(&[5u32, 1, 5, 3, 1], Exec::Cpu)?, vec![1, 3, 5]);
/// # Ok::<(), gpu_primitives::PrimitiveError>(())
/// ```
pub fn distinct<K: SortKey>(keys: &[K], exec: Exec) -> Result<Vec<K>, PrimitiveError> {
    Ok(distinct_with(keys, DistinctOptions::default(), exec)?.values)
}

/// Distinct keys with optional counts and inverse indices, on unsorted or sorted input.
///
/// CPU: already sorted input (checked in one parallel read that stops at the first descent) is
/// grouped directly. Keys whose ordered bits span a small range (at most `max(2^16, n / 4)`
/// values, and at most `2^22`) are counted in per-thread tables: one read, no sort. Otherwise
/// the keys are radix-sorted (with `u32` indices when the inverse is wanted) and grouped.
/// GPU: Onesweep sort (pairs with indices for the inverse), then head flags, a look-back scan
/// and a scatter on the device; only the results travel back.
///
/// # Complexity
/// `O(n)` for sorted or small-range input, otherwise `O(n * w / 8)` for `w`-bit keys.
///
/// # Errors
/// [`PrimitiveError::TooManyForU32Index`] when `inverse` is asked for over more than
/// `u32::MAX` keys; [`PrimitiveError::Gpu`] when the GPU path fails.
///
/// # Examples
/// ```
/// use gpu_primitives::{distinct_with, DistinctOptions, Exec};
/// let d = distinct_with(&[7i32, -1, 7, 7], DistinctOptions { counts: true, inverse: true }, Exec::Cpu)?;
/// assert_eq!(d.values, vec![-1, 7]);
/// assert_eq!(d.counts, Some(vec![1, 3]));
/// assert_eq!(d.inverse, Some(vec![1, 0, 1, 1]));
/// # Ok::<(), gpu_primitives::PrimitiveError>(())
/// ```
pub fn distinct_with<K: SortKey>(
    keys: &[K],
    options: DistinctOptions,
    exec: Exec,
) -> Result<Distinct<K>, PrimitiveError> {
    let n = keys.len();
    if options.inverse && n > u32::MAX as usize {
        return Err(PrimitiveError::TooManyForU32Index { n });
    }
    match exec.resolve(n as u64, GPU_THRESHOLD_SORT)? {
        Target::Cpu => Ok(distinct_cpu(keys, options, false)?),
        Target::Cuda(gpu) => distinct_gpu(gpu, keys, options, false),
    }
}

/// Distinct keys of input that is already sorted ascending in the total order of [`SortKey`]
/// (for example the output of [`crate::radix_sort`]): no sort, one grouping pass.
///
/// # Complexity
/// `O(n)` work.
///
/// # Errors
/// [`PrimitiveError::NotSorted`] when the input is not sorted (the CPU names the first index
/// out of order, the GPU reports index 0); [`PrimitiveError::TooManyForU32Index`] when
/// `inverse` is asked for over more than `u32::MAX` keys; [`PrimitiveError::Gpu`] when the GPU
/// path fails.
///
/// # Examples
/// ```
/// use gpu_primitives::{distinct_sorted, DistinctOptions, Exec, PrimitiveError};
/// let d = distinct_sorted(&[1u64, 1, 2, 9, 9], DistinctOptions { counts: true, inverse: false }, Exec::Cpu)?;
/// assert_eq!((d.values, d.counts), (vec![1, 2, 9], Some(vec![2, 1, 2])));
/// assert_eq!(
///     distinct_sorted(&[2u32, 1], DistinctOptions::default(), Exec::Cpu),
///     Err(PrimitiveError::NotSorted { index: 1 })
/// );
/// # Ok::<(), gpu_primitives::PrimitiveError>(())
/// ```
pub fn distinct_sorted<K: SortKey>(
    sorted: &[K],
    options: DistinctOptions,
    exec: Exec,
) -> Result<Distinct<K>, PrimitiveError> {
    let n = sorted.len();
    if options.inverse && n > u32::MAX as usize {
        return Err(PrimitiveError::TooManyForU32Index { n });
    }
    match exec.resolve(n as u64, GPU_THRESHOLD_SORT)? {
        Target::Cpu => distinct_cpu(sorted, options, true),
        Target::Cuda(gpu) => distinct_gpu(gpu, sorted, options, true),
    }
}

/// First index `i` with `keys[i - 1] > keys[i]`, if any.
fn first_descent<K: SortKey>(keys: &[K]) -> Option<usize> {
    if keys.len() < PARALLEL_SORT {
        keys.windows(2)
            .position(|w| w[0].to_ordered() > w[1].to_ordered())
            .map(|i| i + 1)
    } else {
        keys.par_windows(2)
            .position_first(|w| w[0].to_ordered() > w[1].to_ordered())
            .map(|i| i + 1)
    }
}

fn distinct_cpu<K: SortKey>(
    keys: &[K],
    options: DistinctOptions,
    require_sorted: bool,
) -> Result<Distinct<K>, PrimitiveError> {
    let n = keys.len();
    let descent = first_descent(keys);
    if require_sorted && let Some(i) = descent {
        return Err(PrimitiveError::NotSorted { index: i as u64 });
    }
    if descent.is_none() {
        let bits: Vec<K::Bits> = if n < PARALLEL_SORT {
            keys.iter().map(|k| k.to_ordered()).collect()
        } else {
            keys.par_iter().map(|k| k.to_ordered()).collect()
        };
        return Ok(group_sorted(&bits, None, options));
    }
    if let Some((lo, hi)) = crate::reduce::min_max_cpu(keys) {
        let (lo, hi) = (lo.to_ordered().to_u64(), hi.to_ordered().to_u64());
        let range = hi - lo; // number of values - 1
        if range < (1 << 22) && (range < (1 << 16) || range < (n as u64) / 4) {
            return Ok(dense(keys, lo, range as usize + 1, options));
        }
    }
    if options.inverse {
        let (bits, perm) = argsort_cpu(keys);
        Ok(group_sorted(&bits, Some(&perm), options))
    } else {
        let bits = sorted_bits_cpu(keys);
        Ok(group_sorted(&bits, None, options))
    }
}

/// Groups sorted ordered bits; `perm[i]` is the input position of sorted position `i`
/// (identity when `None`).
fn group_sorted<K: SortKey>(
    bits: &[K::Bits],
    perm: Option<&[u32]>,
    options: DistinctOptions,
) -> Distinct<K> {
    let n = bits.len();
    let mut values = Vec::new();
    let mut counts = Vec::new();
    let mut inverse = if options.inverse {
        vec![0u32; n]
    } else {
        Vec::new()
    };
    let mut start = 0usize;
    for i in 0..n {
        if i == 0 || bits[i] != bits[i - 1] {
            if i > 0 {
                counts.push((i - start) as u64);
            }
            values.push(K::from_ordered(bits[i]));
            start = i;
        }
        if options.inverse {
            let at = perm.map_or(i, |p| p[i] as usize);
            inverse[at] = (values.len() - 1) as u32;
        }
    }
    if n > 0 {
        counts.push((n - start) as u64);
    }
    Distinct {
        values,
        counts: options.counts.then_some(counts),
        inverse: options.inverse.then_some(inverse),
        backend: Backend::Cpu,
    }
}

/// Counting path for keys whose ordered bits lie in `[lo, lo + size)`.
fn dense<K: SortKey>(keys: &[K], lo: u64, size: usize, options: DistinctOptions) -> Distinct<K> {
    let n = keys.len();
    let index = |k: &K| (k.to_ordered().to_u64() - lo) as usize;
    let count_chunk = |c: &[K]| {
        let mut t = vec![0u64; size];
        for k in c {
            t[index(k)] += 1;
        }
        t
    };
    let table: Vec<u64> = if n < PARALLEL_SORT {
        count_chunk(keys)
    } else {
        let chunk = n.div_ceil(rayon::current_num_threads().max(1));
        keys.par_chunks(chunk)
            .map(count_chunk)
            .reduce_with(|mut a, b| {
                a.iter_mut().zip(b).for_each(|(x, y)| *x += y);
                a
            })
            .unwrap_or_else(|| vec![0; size])
    };
    let mut values = Vec::new();
    let mut counts = Vec::new();
    let mut rank = if options.inverse {
        vec![0u32; size]
    } else {
        Vec::new()
    };
    for (i, &c) in table.iter().enumerate() {
        if c > 0 {
            if options.inverse {
                rank[i] = values.len() as u32;
            }
            values.push(K::from_ordered(<K::Bits as RadixBits>::from_u64(
                lo + i as u64,
            )));
            counts.push(c);
        }
    }
    let inverse = options.inverse.then(|| {
        if n < PARALLEL_SORT {
            keys.iter().map(|k| rank[index(k)]).collect()
        } else {
            keys.par_iter().map(|k| rank[index(k)]).collect()
        }
    });
    Distinct {
        values,
        counts: options.counts.then_some(counts),
        inverse,
        backend: Backend::Cpu,
    }
}

fn distinct_gpu<K: SortKey>(
    gpu: &Gpu,
    keys: &[K],
    options: DistinctOptions,
    presorted: bool,
) -> Result<Distinct<K>, PrimitiveError> {
    let n = keys.len();
    if n == 0 {
        return Ok(Distinct {
            values: Vec::new(),
            counts: options.counts.then(Vec::new),
            inverse: options.inverse.then(Vec::new),
            backend: Backend::Cuda,
        });
    }
    let d = gpu.upload(keys)?;
    let (sorted, perm) = if presorted {
        (d, None)
    } else if options.inverse {
        let idx = crate::cuda::iota(gpu, n)?;
        let (k, p) = crate::cuda::sort::<K, u32>(gpu, d, Some(idx), false)?;
        (k, p)
    } else {
        let (k, _) = crate::cuda::sort::<K, u32>(gpu, d, None, false)?;
        (k, None)
    };
    let inverse_perm = options.inverse.then_some(perm.as_ref());
    let Some((values, m, counts, inverse)) =
        crate::cuda::distinct_sorted(gpu, &sorted, options.counts, inverse_perm)?
    else {
        return Err(PrimitiveError::NotSorted { index: 0 });
    };
    Ok(Distinct {
        values: gpu.download(&values.slice(0..m))?,
        counts: match counts {
            Some(c) => Some(gpu.download(&c.slice(0..m))?),
            None => None,
        },
        inverse: match inverse {
            Some(i) => Some(gpu.download(&i)?),
            None => None,
        },
        backend: Backend::Cuda,
    })
}
