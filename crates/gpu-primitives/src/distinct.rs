//! Distinct (unique) values with optional counts and inverse indices.

use gpu_runtime::{Backend, Exec, Gpu, Target};
use rayon::prelude::*;

use crate::key::{Equality, RadixBits, SortKey};
use crate::radix_cpu::PARALLEL_SORT;
use crate::sort::{argsort_cpu, sorted_bits_cpu};
use crate::{GPU_THRESHOLD_SORT, PrimitiveError};

/// What [`distinct_with`] computes besides the values, and which keys are one value.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DistinctOptions {
    /// Also return how many times each distinct value occurs.
    pub counts: bool,
    /// Also return, for every input position, the index of its value in `values`.
    pub inverse: bool,
    /// Which float keys are the same value: numpy's [`Equality::Numeric`] by default
    /// (`-0.0 == +0.0`, one NaN group), or [`Equality::Bitwise`]. No effect on integers.
    pub equality: Equality,
}

/// The result of [`distinct_with`] / [`distinct_sorted`].
///
/// Each distinct value is represented by the **first key of its group in the total order of
/// [`SortKey`]**, which is always a key of the input: under [`Equality::Numeric`] the zeros
/// come back as `-0.0` when the input holds any `-0.0` (else `+0.0`), and the one NaN group as
/// its first NaN in that order (the positive NaN with the smallest payload, or when there is
/// none the negative NaN with the largest). The representative does not depend on the input's
/// order. (numpy returns whichever member its unstable sort puts first: with numpy 2.4,
/// `np.unique([0.0, -0.0])` is `[0.]` but `np.unique([-0.0, 0.0])` is `[-0.]`, and NaNs come
/// back as the default quiet NaN whatever their bits; the values are equal either way, as
/// `np.array_equal(a, b, equal_nan=True)` sees them.)
///
/// The NaN group, like every NaN in a sort, is **last**.
#[derive(Debug, Clone, PartialEq)]
pub struct Distinct<K> {
    /// The distinct values, ascending in the total order of [`SortKey`].
    pub values: Vec<K>,
    /// `counts[j]` = occurrences of `values[j]` (when asked for).
    pub counts: Option<Vec<u64>>,
    /// `values[inverse[i]]` equals `keys[i]` under the chosen [`Equality`] for every input
    /// position `i` (when asked for).
    pub inverse: Option<Vec<u32>>,
    /// Where it ran.
    pub backend: Backend,
}

/// The reference for the default options (numpy's [`Equality::Numeric`]): sort a copy in the
/// total order, start a new value wherever a key is not [`Equality::eq`] to the one before,
/// count, and binary-search every key's value. Returns `(values, counts, inverse)`.
///
/// # Complexity
/// `O(n log n)`.
///
/// # Examples
/// ```
/// use gpu_primitives::distinct_reference;
/// let (values, counts, inverse) = distinct_reference(&[0.0f64, f64::NAN, -0.0, -f64::NAN]);
/// assert_eq!(values[0].to_bits(), (-0.0f64).to_bits());
/// assert!(values[1].is_nan());
/// assert_eq!((counts, inverse), (vec![2, 2], vec![0, 1, 0, 1]));
/// ```
pub fn distinct_reference<K: SortKey>(keys: &[K]) -> (Vec<K>, Vec<u64>, Vec<u32>) {
    let same = |a: K, b: K| Equality::Numeric.eq(a, b);
    let mut sorted = keys.to_vec();
    sorted.sort_unstable_by(crate::total_cmp); // keys that compare equal have equal bits
    let mut values: Vec<K> = Vec::new();
    let mut counts: Vec<u64> = Vec::new();
    for k in sorted {
        match values.last() {
            Some(&v) if same(v, k) => *counts.last_mut().expect("same length as values") += 1,
            _ => {
                values.push(k);
                counts.push(1);
            }
        }
    }
    // A group's representative is its first key in the total order, so a key's value is the
    // last one not above it.
    let inverse = keys
        .iter()
        .map(|k| {
            let at = values.partition_point(|v| crate::total_cmp(v, k).is_le()) - 1;
            debug_assert!(same(values[at], *k));
            at as u32
        })
        .collect();
    (values, counts, inverse)
}

/// The distinct values of `keys`, ascending in the total order of [`SortKey`]; floats as
/// numpy's `unique` (`-0.0 == +0.0`, all NaNs one value, last). [`distinct_with`] has the
/// bitwise option, counts and the inverse.
///
/// Works on any input order; see [`distinct_with`] for the algorithms and [`Distinct`] for
/// which key represents a group.
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
/// let v = distinct(&[f64::NAN, 0.0, 1.0, -0.0, -f64::NAN], Exec::Cpu)?;
/// assert_eq!(v.len(), 3); // -0.0, 1.0, NaN
/// assert!(v[0] == 0.0 && v[0].is_sign_negative() && v[1] == 1.0 && v[2].is_nan());
/// # Ok::<(), gpu_primitives::PrimitiveError>(())
/// ```
pub fn distinct<K: SortKey>(keys: &[K], exec: Exec) -> Result<Vec<K>, PrimitiveError> {
    Ok(distinct_with(keys, DistinctOptions::default(), exec)?.values)
}

/// A public entry point over [`distinct_on`], its docs first: `$name($keys, options, exec)`,
/// the keys taken as sorted (checked, not sorted) when `$sorted`.
macro_rules! distinct_entry {
    ($(#[$doc:meta])* $name:ident($keys:ident), sorted: $sorted:literal) => {
        $(#[$doc])*
        pub fn $name<K: SortKey>(
            $keys: &[K],
            options: DistinctOptions,
            exec: Exec,
        ) -> Result<Distinct<K>, PrimitiveError> {
            distinct_on($keys, options, exec, $sorted)
        }
    };
}

distinct_entry! {
    /// Distinct keys with optional counts and inverse indices, on unsorted or sorted input, under
    /// the chosen [`Equality`] (see [`Distinct`] for the representative of each group).
    ///
    /// CPU: already sorted input (checked in one parallel read that stops at the first descent) is
    /// grouped directly. Keys whose ordered bits span a small range (at most `max(2^16, n / 4)`
    /// values, and at most `2^22`; integers only) are counted in per-thread tables: one read, no
    /// sort. Otherwise the keys are sorted (by [`crate::radix_sort`]'s CPU sort; the radix sort
    /// with `u32` indices when the inverse is wanted) and grouped.
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
    /// use gpu_primitives::{distinct_with, DistinctOptions, Equality, Exec};
    /// let all = DistinctOptions { counts: true, inverse: true, ..Default::default() };
    /// let d = distinct_with(&[7i32, -1, 7, 7], all, Exec::Cpu)?;
    /// assert_eq!(d.values, vec![-1, 7]);
    /// assert_eq!(d.counts, Some(vec![1, 3]));
    /// assert_eq!(d.inverse, Some(vec![1, 0, 1, 1]));
    ///
    /// // numpy's unique(x, return_inverse=True, return_counts=True), and the bitwise option
    /// let x = [0.0f32, f32::NAN, -0.0, -f32::NAN, 2.0];
    /// let d = distinct_with(&x, all, Exec::Cpu)?;
    /// assert_eq!((d.values.len(), d.counts), (3, Some(vec![2, 1, 2])));
    /// assert_eq!(d.inverse, Some(vec![0, 2, 0, 2, 1]));
    /// let bitwise = DistinctOptions { equality: Equality::Bitwise, ..all };
    /// let d = distinct_with(&x, bitwise, Exec::Cpu)?;
    /// assert_eq!(d.counts, Some(vec![1, 1, 1, 1, 1])); // -0.0, +0.0, 2.0, NaN, -NaN
    /// # Ok::<(), gpu_primitives::PrimitiveError>(())
    /// ```
    distinct_with(keys), sorted: false
}

distinct_entry! {
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
    /// let counts = DistinctOptions { counts: true, ..Default::default() };
    /// let d = distinct_sorted(&[1u64, 1, 2, 9, 9], counts, Exec::Cpu)?;
    /// assert_eq!((d.values, d.counts), (vec![1, 2, 9], Some(vec![2, 1, 2])));
    /// assert_eq!(
    ///     distinct_sorted(&[2u32, 1], DistinctOptions::default(), Exec::Cpu),
    ///     Err(PrimitiveError::NotSorted { index: 1 })
    /// );
    /// # Ok::<(), gpu_primitives::PrimitiveError>(())
    /// ```
    distinct_sorted(sorted), sorted: true
}

/// [`distinct_with`] (`sorted` false) and [`distinct_sorted`] (`sorted` true: the keys are
/// checked, not sorted): the size check, then the CPU or GPU path `exec` picks.
fn distinct_on<K: SortKey>(
    keys: &[K],
    options: DistinctOptions,
    exec: Exec,
    sorted: bool,
) -> Result<Distinct<K>, PrimitiveError> {
    let n = keys.len();
    if options.inverse && n > u32::MAX as usize {
        return Err(PrimitiveError::TooManyForU32Index { n });
    }
    match exec.resolve(n as u64, GPU_THRESHOLD_SORT)? {
        Target::Cpu => distinct_cpu(keys, options, sorted),
        Target::Cuda(gpu) => distinct_gpu(gpu, keys, options, sorted),
    }
}

/// First index `i` with `keys[i - 1] > keys[i]`, if any.
fn first_descent<K: SortKey>(keys: &[K]) -> Option<usize> {
    if keys.len() < PARALLEL_SORT {
        keys.windows(2)
            .position(|w| w[0].to_ordered() > w[1].to_ordered())
            .map(|i| i + 1)
    } else {
        // Blocks in parallel, each scanned on its own (rayon's per-element `position_first`
        // is slow when nothing is found, as on a sorted input); the first block with a
        // descent wins, and unsorted input usually stops in the first block.
        const BLOCK: usize = 1 << 16;
        (0..keys.len().div_ceil(BLOCK))
            .into_par_iter()
            .find_map_first(|c| {
                let lo = (c * BLOCK).max(1);
                let hi = ((c + 1) * BLOCK).min(keys.len());
                (lo..hi).find(|&i| keys[i - 1].to_ordered() > keys[i].to_ordered())
            })
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
    // Integers in a small range are counted; floats skip the min/max read (an extra pass over
    // the keys): a small range of ordered bits means a few adjacent floats, which real data
    // rarely is, and the sort below handles it anyway.
    let range = if K::KIND == 2 {
        None
    } else {
        crate::reduce::min_max_cpu(keys)
    };
    if let Some((lo, hi)) = range {
        let (lo, hi) = (lo.to_ordered().to_u64(), hi.to_ordered().to_u64());
        let range = hi - lo; // number of values - 1
        if range < (1 << 22) && (range < (1 << 16) || range < (n as u64) / 4) {
            return Ok(dense(keys, lo, range as usize + 1, options));
        }
    }
    if options.inverse {
        let (bits, perm) = argsort_cpu(keys, Equality::Bitwise);
        Ok(group_sorted(&bits, Some(&perm), options))
    } else {
        if !options.counts
            && options.equality == Equality::Numeric
            && let Some(values) = crate::simd_sort::distinct_f64_avx2(keys, true)
        {
            return Ok(Distinct {
                values,
                counts: None,
                inverse: None,
                backend: Backend::Cpu,
            });
        }
        let bits = sorted_bits_cpu(keys);
        // values alone with AVX-512: grouped in place at memory speed (one thread is enough)
        let vector = !options.counts && crate::simd_sort::available();
        if n >= PARALLEL_SORT && rayon::current_num_threads() > 1 && !vector {
            Ok(group_sorted(&bits, None, options))
        } else {
            Ok(group_in_place(bits, options))
        }
    }
}

/// [`group_sorted`] without the inverse, on one thread and in place: each group's first key
/// is decoded into the front of `bits` itself, which becomes `values` (no second buffer to
/// allocate and fault in: numpy's `unique` of 10^7 floats on one thread was faster than
/// writing a fresh output).
fn group_in_place<K: SortKey>(bits: Vec<K::Bits>, options: DistinctOptions) -> Distinct<K> {
    const {
        assert!(size_of::<K>() == size_of::<K::Bits>());
        assert!(align_of::<K>() == align_of::<K::Bits>());
    };
    let n = bits.len();
    let mut bits = std::mem::ManuallyDrop::new(bits);
    let class = |b: K::Bits| options.equality.class::<K>(b);
    let mut counts = Vec::new();
    let mut m = 0;
    let grouped = if options.counts {
        None
    } else {
        crate::simd_sort::group_sorted_bits::<K>(&mut bits, options.equality)
    };
    let as_bits = |k: K| {
        // SAFETY: K and K::Bits are sealed plain numbers of the same size (asserted above).
        unsafe { std::mem::transmute_copy::<K, K::Bits>(&k) }
    };
    if let Some(heads) = grouped {
        m = heads;
    } else if n > 0 && !options.counts {
        // Without branches: every key is written, decoded, at the write position, which moves
        // on past group heads only (a slot written is one read before, or the key's own).
        m = crate::sort::wide(|| {
            let mut prev = class(bits[0]);
            bits[0] = as_bits(K::from_ordered(bits[0]));
            let mut m = 1;
            for i in 1..n {
                let b = bits[i];
                let c = class(b);
                bits[m] = as_bits(K::from_ordered(b));
                m += usize::from(c != prev);
                prev = c;
            }
            m
        });
    } else if n > 0 {
        let mut prev = class(bits[0]);
        let mut start = 0;
        let head = K::from_ordered(bits[0]);
        // SAFETY: K and K::Bits are sealed plain numbers of the same size (asserted above).
        bits[0] = unsafe { std::mem::transmute_copy::<K, K::Bits>(&head) };
        m = 1;
        for i in 1..n {
            let b = bits[i];
            let c = class(b);
            if c != prev {
                if options.counts {
                    counts.push((i - start) as u64);
                }
                start = i;
                prev = c;
                // m <= i: the slot written was read before (or is `i` itself)
                let head = K::from_ordered(b);
                // SAFETY: as above.
                bits[m] = unsafe { std::mem::transmute_copy::<K, K::Bits>(&head) };
                m += 1;
            }
        }
        if options.counts {
            counts.push((n - start) as u64);
        }
    }
    let cap = bits.capacity();
    // SAFETY: the buffer came from a Vec<K::Bits> of capacity `cap` (ownership taken from the
    // ManuallyDrop); K has K::Bits' size and alignment (asserted above), so the allocation's
    // layout is the same; its first `m` slots hold the bits of valid `K`s (every bit pattern
    // of a sealed key type is a valid value).
    let mut values = unsafe { Vec::from_raw_parts(bits.as_mut_ptr().cast::<K>(), m, cap) };
    if m < cap / 2 {
        values.shrink_to_fit();
    }
    Distinct {
        values,
        counts: options.counts.then_some(counts),
        inverse: None,
        backend: Backend::Cpu,
    }
}

/// Groups sorted ordered bits (a group is a run of equal classes under `options.equality`;
/// its first key represents it); `perm[i]` is the input position of sorted position `i`
/// (identity when `None`).
fn group_sorted<K: SortKey>(
    bits: &[K::Bits],
    perm: Option<&[u32]>,
    options: DistinctOptions,
) -> Distinct<K> {
    let n = bits.len();
    if !options.inverse && n >= PARALLEL_SORT {
        return group_sorted_parallel(bits, options);
    }
    let mut values = Vec::new();
    let mut counts = Vec::new();
    let mut inverse = if options.inverse {
        vec![0u32; n]
    } else {
        Vec::new()
    };
    let class = |b: K::Bits| options.equality.class::<K>(b);
    let mut start = 0usize;
    for i in 0..n {
        if i == 0 || class(bits[i]) != class(bits[i - 1]) {
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

/// [`group_sorted`] without the inverse, on all threads: each chunk counts its group heads (a
/// key whose class differs from the key before it, across chunk borders too) and notes its
/// first; then each chunk writes its values, and the counts of its groups (a group's count is
/// the distance to the next head, or to the end), into its own slots of exactly sized
/// outputs.
fn group_sorted_parallel<K: SortKey>(bits: &[K::Bits], options: DistinctOptions) -> Distinct<K> {
    use std::mem::MaybeUninit;
    let n = bits.len();
    let class = |b: K::Bits| options.equality.class::<K>(b);
    let is_head = |i: usize| i == 0 || class(bits[i]) != class(bits[i - 1]);
    let chunk = n
        .div_ceil(rayon::current_num_threads().max(1) * 4)
        .max(1 << 14);
    let chunks = n.div_ceil(chunk);
    let range = |c: usize| c * chunk..((c + 1) * chunk).min(n);
    let found: Vec<(usize, Option<usize>)> = (0..chunks)
        .into_par_iter()
        .map(|c| {
            let mut first = None;
            let mut count = 0;
            for i in range(c) {
                if is_head(i) {
                    first.get_or_insert(i);
                    count += 1;
                }
            }
            (count, first)
        })
        .collect();
    let m: usize = found.iter().map(|f| f.0).sum();
    // the first head after chunk c (n after the last)
    let mut next_head = vec![n; chunks];
    for c in (0..chunks.saturating_sub(1)).rev() {
        next_head[c] = found[c + 1].1.unwrap_or(next_head[c + 1]);
    }
    let mut values: Vec<K> = Vec::with_capacity(m);
    let mut counts: Vec<u64> = Vec::with_capacity(if options.counts { m } else { 0 });
    {
        let sizes = || found.iter().map(|f| f.0);
        let vparts = split_sizes(&mut values.spare_capacity_mut()[..m], sizes());
        let cparts = if options.counts {
            split_sizes(&mut counts.spare_capacity_mut()[..m], sizes())
        } else {
            Vec::new()
        };
        let mut cparts: Vec<Option<&mut [MaybeUninit<u64>]>> =
            cparts.into_iter().map(Some).collect();
        cparts.resize_with(chunks, || None);
        vparts
            .into_par_iter()
            .zip(cparts.into_par_iter())
            .enumerate()
            .for_each(|(c, (vs, mut cs))| {
                let mut j = 0;
                let mut last = None;
                for i in range(c) {
                    if is_head(i) {
                        vs[j].write(K::from_ordered(bits[i]));
                        if let (Some(cs), Some(p)) = (cs.as_deref_mut(), last) {
                            cs[j - 1].write((i - p) as u64);
                        }
                        last = Some(i);
                        j += 1;
                    }
                }
                if let (Some(cs), Some(p)) = (cs.as_deref_mut(), last) {
                    cs[j - 1].write((next_head[c] - p) as u64);
                }
            });
    }
    // SAFETY: every chunk wrote all its `found[c].0` slots of both outputs (its heads), and the
    // slots of the chunks partition 0..m.
    unsafe {
        values.set_len(m);
        if options.counts {
            counts.set_len(m);
        }
    }
    Distinct {
        values,
        counts: options.counts.then_some(counts),
        inverse: None,
        backend: Backend::Cpu,
    }
}

/// `v` cut into consecutive parts of the given sizes (which sum to at most `v.len()`).
fn split_sizes<T>(mut v: &mut [T], sizes: impl Iterator<Item = usize>) -> Vec<&mut [T]> {
    let mut parts = Vec::new();
    for k in sizes {
        let (head, tail) = v.split_at_mut(k);
        parts.push(head);
        v = tail;
    }
    parts
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
    let mut counts: Vec<u64> = Vec::new();
    let mut rank = if options.inverse {
        vec![0u32; size]
    } else {
        Vec::new()
    };
    let class = |b: K::Bits| options.equality.class::<K>(b);
    let mut last_class = None;
    for (i, &c) in table.iter().enumerate() {
        if c > 0 {
            let bits = <K::Bits as RadixBits>::from_u64(lo + i as u64);
            // a new value unless it is equal to the previous one (-0.0 then +0.0, NaNs)
            if last_class != Some(class(bits)) {
                last_class = Some(class(bits));
                values.push(K::from_ordered(bits));
                counts.push(0);
            }
            if options.inverse {
                rank[i] = (values.len() - 1) as u32;
            }
            *counts.last_mut().expect("a value was pushed") += c;
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
        crate::cuda::distinct_sorted(gpu, &sorted, options.equality, options.counts, inverse_perm)?
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
