//! Device-resident variants: inputs and outputs stay in GPU memory, so operations chain
//! (sort -> distinct -> select ...) without host round trips.
//!
//! Every function takes the [`Gpu`] (from [`gpu_runtime::gpu`]) and device buffers
//! (`&DeviceBuffer<T>`, created with [`Gpu::upload`] or by another function here) and returns new
//! device buffers; inputs are never modified. Work is queued on the GPU's one stream and these
//! functions do **not** wait for it, except where the size of the result depends on the data
//! (`select_by_flags`, `split_by_flags`, `distinct_sorted`): those read one small count back,
//! which waits for the work queued before it. Temporary storage is allocated and freed
//! internally; out-of-memory is [`GpuError::OutOfMemory`] with sizes.
//!
//! ```no_run
//! use gpu_primitives::device;
//! # fn main() -> Result<(), gpu_primitives::PrimitiveError> {
//! let gpu = gpu_runtime::gpu()?;
//! let keys = gpu.upload(&[5u32, 1, 5, 3])?;
//! let sorted = device::radix_sort(gpu, &keys)?;
//! let d = device::distinct_sorted(gpu, &sorted, gpu_primitives::Equality::Numeric)?;
//! assert_eq!(gpu.download(&d.values.slice(0..d.len))?, vec![1, 3, 5]);
//! # Ok(()) }
//! ```

use gpu_runtime::DeviceBuffer;
use gpu_runtime::{Gpu, GpuError};

use crate::PrimitiveError;
use crate::key::{Element, Equality, SortKey, Summable};

/// A device buffer of which only the first `len` elements are meaningful (the result of a
/// data-dependent-size operation; the buffer keeps the input's capacity).
#[derive(Debug)]
pub struct DeviceVec<T> {
    /// The buffer (capacity at least `len`).
    pub buf: DeviceBuffer<T>,
    /// Number of valid elements.
    pub len: usize,
}

/// Device result of [`distinct_sorted`].
#[derive(Debug)]
pub struct DeviceDistinct<K> {
    /// Distinct values in `values[..len]`, ascending.
    pub values: DeviceBuffer<K>,
    /// `counts[..len]`: occurrences of each distinct key.
    pub counts: DeviceBuffer<u64>,
    /// Number of distinct keys.
    pub len: usize,
}

fn copy<T: Element>(gpu: &Gpu, x: &DeviceBuffer<T>) -> Result<DeviceBuffer<T>, GpuError> {
    gpu.duplicate(x)
}

/// A sorted copy of `keys`, descending when `desc`.
fn sorted_copy<K: SortKey>(
    gpu: &Gpu,
    keys: &DeviceBuffer<K>,
    desc: bool,
) -> Result<DeviceBuffer<K>, GpuError> {
    let c = copy(gpu, keys)?;
    Ok(crate::cuda::sort::<K, u32>(gpu, c, None, desc)?.0)
}

/// Sorted copy of `keys` (ascending, total order; Onesweep). Does not synchronise.
///
/// # Complexity
/// `O(n * w / 8)` for `w`-bit keys; about `2n` extra elements of device memory.
///
/// # Errors
/// [`GpuError`] (out of memory with sizes, launch failure).
pub fn radix_sort<K: SortKey>(
    gpu: &Gpu,
    keys: &DeviceBuffer<K>,
) -> Result<DeviceBuffer<K>, GpuError> {
    sorted_copy(gpu, keys, false)
}

/// Sorted copy of `keys`, descending (the reverse of [`radix_sort`]). Does not synchronise.
///
/// # Complexity
/// As [`radix_sort`].
///
/// # Errors
/// [`GpuError`].
pub fn radix_sort_desc<K: SortKey>(
    gpu: &Gpu,
    keys: &DeviceBuffer<K>,
) -> Result<DeviceBuffer<K>, GpuError> {
    sorted_copy(gpu, keys, true)
}

/// Stable sort of pairs: sorted copies of `keys` and of `values` permuted alike. Does not
/// synchronise.
///
/// # Complexity
/// As [`radix_sort`], moving `values` too.
///
/// # Errors
/// [`PrimitiveError::LengthMismatch`]; [`PrimitiveError::Gpu`].
pub fn radix_sort_pairs<K: SortKey, V: Element>(
    gpu: &Gpu,
    keys: &DeviceBuffer<K>,
    values: &DeviceBuffer<V>,
) -> Result<(DeviceBuffer<K>, DeviceBuffer<V>), PrimitiveError> {
    PrimitiveError::check_len("values", keys.len(), values.len())?;
    let k = copy(gpu, keys)?;
    let v = copy(gpu, values)?;
    let (k, v) = crate::cuda::sort::<K, V>(gpu, k, Some(v), false)?;
    let v = match v {
        Some(v) => v,
        None => unreachable!("values were given"),
    };
    Ok((k, v))
}

/// The stable sorting permutation of `keys` as `u32` indices, numpy's
/// `argsort(kind="stable")` as [`crate::argsort`]: NaNs last, keys equal as numbers (`-0.0`
/// and `+0.0`, NaNs) in index order. Does not synchronise.
///
/// # Complexity
/// As [`radix_sort_pairs`].
///
/// # Errors
/// [`PrimitiveError::TooManyForU32Index`]; [`PrimitiveError::Gpu`].
pub fn argsort<K: SortKey>(
    gpu: &Gpu,
    keys: &DeviceBuffer<K>,
) -> Result<DeviceBuffer<u32>, PrimitiveError> {
    let n = keys.len();
    if n > u32::MAX as usize {
        return Err(PrimitiveError::TooManyForU32Index { n });
    }
    let idx = crate::cuda::iota(gpu, n)?;
    let mut k = copy(gpu, keys)?;
    crate::cuda::float_classes(gpu, &mut k)?;
    let (_, p) = crate::cuda::sort::<K, u32>(gpu, k, Some(idx), false)?;
    match p {
        Some(p) => Ok(p),
        None => unreachable!("values were given"),
    }
}

/// Inclusive prefix sums into the accumulator type (single-pass look-back scan). Does not
/// synchronise.
///
/// # Complexity
/// `O(n)`, about `2n` elements of memory traffic.
///
/// # Errors
/// [`GpuError`].
pub fn inclusive_scan<T: Summable>(
    gpu: &Gpu,
    values: &DeviceBuffer<T>,
) -> Result<DeviceBuffer<T::Sum>, GpuError> {
    crate::cuda::scan(gpu, values, true)
}

/// Exclusive prefix sums into the accumulator type. Does not synchronise.
///
/// # Complexity
/// `O(n)`, about `2n` elements of memory traffic.
///
/// # Errors
/// [`GpuError`].
pub fn exclusive_scan<T: Summable>(
    gpu: &Gpu,
    values: &DeviceBuffer<T>,
) -> Result<DeviceBuffer<T::Sum>, GpuError> {
    crate::cuda::scan(gpu, values, false)
}

/// Sum in the accumulator type (returns to the host, so it synchronises).
///
/// # Complexity
/// `O(n)`.
///
/// # Errors
/// [`GpuError`].
pub fn reduce_sum<T: Summable>(gpu: &Gpu, values: &DeviceBuffer<T>) -> Result<T::Sum, GpuError> {
    crate::cuda::sum(gpu, values)
}

/// Minimum and maximum in the total order, `None` when empty (synchronises).
///
/// # Complexity
/// `O(n)`.
///
/// # Errors
/// [`GpuError`].
pub fn reduce_min_max<K: SortKey>(
    gpu: &Gpu,
    values: &DeviceBuffer<K>,
) -> Result<Option<(K, K)>, GpuError> {
    crate::cuda::min_max(gpu, values)
}

/// A flag-driven device primitive `$name` (its docs first): the flags checked to be as many
/// as the values, then `$op` (select or split), its buffer and length as a [`DeviceVec`].
macro_rules! by_flags {
    ($(#[$doc:meta])* $name:ident => $op:path) => {
        $(#[$doc])*
        pub fn $name<T: Element>(
            gpu: &Gpu,
            values: &DeviceBuffer<T>,
            flags: &DeviceBuffer<bool>,
        ) -> Result<DeviceVec<T>, PrimitiveError> {
            PrimitiveError::check_len("flags", values.len(), flags.len())?;
            let (buf, len) = $op(gpu, values, flags)?;
            Ok(DeviceVec { buf, len })
        }
    };
}

by_flags! {
    /// Stable compaction: the elements whose flag is true, in order. Reads the count back.
    ///
    /// # Complexity
    /// `O(n)`.
    ///
    /// # Errors
    /// [`PrimitiveError::LengthMismatch`]; [`PrimitiveError::Gpu`].
    select_by_flags => crate::cuda::select
}

by_flags! {
    /// Stable split: false-flagged elements first; `len` of the result is the boundary (the
    /// buffer holds all `n` elements). Reads the boundary back.
    ///
    /// # Complexity
    /// `O(n)`.
    ///
    /// # Errors
    /// [`PrimitiveError::LengthMismatch`]; [`PrimitiveError::Gpu`].
    split_by_flags => crate::cuda::split
}

/// Distinct values and their counts from keys sorted ascending (e.g. by [`radix_sort`]),
/// under `equality` ([`Equality::Numeric`], numpy's, is the default elsewhere: `-0.0 == +0.0`
/// and all NaNs one value; each value is its group's first key, as in
/// [`Distinct`](crate::Distinct)). Reads the number of groups back.
///
/// # Complexity
/// `O(n)`.
///
/// # Errors
/// [`PrimitiveError::NotSorted`] (index 0: the GPU does not locate it);
/// [`PrimitiveError::Gpu`].
pub fn distinct_sorted<K: SortKey>(
    gpu: &Gpu,
    sorted: &DeviceBuffer<K>,
    equality: Equality,
) -> Result<DeviceDistinct<K>, PrimitiveError> {
    match crate::cuda::distinct_sorted(gpu, sorted, equality, true, None)? {
        None => Err(PrimitiveError::NotSorted { index: 0 }),
        Some((values, len, counts, _)) => Ok(DeviceDistinct {
            values,
            counts: match counts {
                Some(c) => c,
                None => gpu.alloc_zeros::<u64>(1)?,
            },
            len,
        }),
    }
}

/// Histogram of `u32` keys into `bins` bins (returns to the host, so it synchronises).
///
/// # Complexity
/// `O(n + bins)`.
///
/// # Errors
/// [`PrimitiveError::KeyOutOfRange`] (the key is reported as `u32::MAX` when unknown on the
/// host: download the keys to see it); [`PrimitiveError::Gpu`].
pub fn histogram(
    gpu: &Gpu,
    keys: &DeviceBuffer<u32>,
    bins: u32,
) -> Result<Vec<u64>, PrimitiveError> {
    if bins == 0 && !keys.is_empty() {
        return Err(PrimitiveError::ZeroBins);
    }
    match crate::cuda::histogram(gpu, keys, bins)? {
        Ok(h) => Ok(h),
        Err(index) => Err(PrimitiveError::KeyOutOfRange {
            index,
            key: u32::MAX,
            bins: bins as usize,
        }),
    }
}
