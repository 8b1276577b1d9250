//! Radix sort of keys, of key–value pairs, and argsort.

use std::mem::MaybeUninit;

use gpu_runtime::{Backend, Exec, Target};
use rayon::prelude::*;

use crate::key::{Equality, RadixBits, SortKey};
use crate::radix_cpu::{PARALLEL_SORT, sort_bits};
use crate::{GPU_THRESHOLD_SORT, PrimitiveError};

/// The reference sort: the standard library's stable sort, comparing in the total order of
/// [`SortKey`].
pub fn sort_reference<K: SortKey>(keys: &mut [K]) {
    keys.sort_by_key(|k| k.to_ordered());
}

/// Reinterprets keys as their ordered-bits type (same size and alignment).
fn as_bits_mut<K: SortKey>(keys: &mut [K]) -> &mut [K::Bits] {
    assert!(size_of::<K>() == size_of::<K::Bits>() && align_of::<K>() == align_of::<K::Bits>());
    // SAFETY: K and K::Bits are sealed plain numbers of equal size and alignment (asserted) and
    // every bit pattern is valid for both; the borrow is exclusive for the returned lifetime.
    unsafe { std::slice::from_raw_parts_mut(keys.as_mut_ptr().cast::<K::Bits>(), keys.len()) }
}

fn map_in_place<K: SortKey>(keys: &mut [K], f: impl Fn(K) -> K + Sync + Send) {
    if keys.len() < PARALLEL_SORT {
        keys.iter_mut().for_each(|k| *k = f(*k));
    } else {
        keys.par_iter_mut().for_each(|k| *k = f(*k));
    }
}

/// Sorts ordered bits: keys alone by the vectorized quicksort where the CPU has it (an unstable
/// sort of bits is indistinguishable from a stable one), else and for pairs by the radix sort.
pub(crate) fn sort_any<B: RadixBits, V: Copy + Send + Sync>(bits: &mut [B], vals: &mut [V]) {
    if size_of::<V>() == 0 && crate::simd_sort::sort_unsigned(bits, true) {
        return;
    }
    sort_bits(bits, vals);
}

/// A key's ordered bits (complemented when `desc`) stored in `K`'s own storage (same width).
#[inline(always)]
fn encode<K: SortKey>(k: K, desc: bool) -> K {
    let b = k.to_ordered();
    let b = if desc { b.complement() } else { b };
    // SAFETY: K and K::Bits are sealed plain numbers of equal size; every bit pattern is valid.
    unsafe { std::mem::transmute_copy::<K::Bits, K>(&b) }
}

/// The inverse of [`encode`].
#[inline(always)]
fn decode<K: SortKey>(k: K, desc: bool) -> K {
    // SAFETY: as in `encode`.
    let b = unsafe { std::mem::transmute_copy::<K, K::Bits>(&k) };
    K::from_ordered(if desc { b.complement() } else { b })
}

/// Sorts ordered bits on the CPU; `desc` complements them around the sort (stable descending).
fn cpu_sort<K: SortKey, V: Copy + Send + Sync>(keys: &mut [K], vals: &mut [V], desc: bool) {
    if K::KIND == 0 && !desc {
        // unsigned ascending: the keys are their own ordered bits
        sort_any(as_bits_mut(keys), vals);
        return;
    }
    if K::KIND == 1 && !desc && size_of::<V>() == 0 && crate::simd_sort::sort_signed(keys, true) {
        return; // signed ascending keys: sorted as themselves, no transform
    }
    if K::KIND == 2
        && !desc
        && size_of::<V>() == 0
        && crate::simd_sort::sort_floats_avx2(keys, true)
    {
        return; // floats ascending, AVX2: compared as floats
    }
    // keys -> ordered bits in place, sorted, and back
    map_in_place(keys, |k| encode(k, desc));
    if K::KIND == 2 && !desc && size_of::<V>() == 0 {
        // floats ascending: the sort's last stores decode
        if crate::simd_sort::sort_floats_decoded::<K>(as_bits_mut(keys), true) {
            return;
        }
    }
    sort_any(as_bits_mut(keys), vals);
    map_in_place(keys, |k| decode(k, desc));
}

/// Writes the keys of `src` into `dst` sorted ascending: the result of [`radix_sort`] on a
/// copy, without a separate copy pass. `dst` may be uninitialised (a fresh output buffer);
/// every slot is written. The door for callers that return a sorted copy (numpy's
/// `np.sort`): on the CPU the copy is fused with the key transform.
///
/// # Complexity
/// As [`radix_sort`], plus one read of `src`.
///
/// # Errors
/// [`PrimitiveError::LengthMismatch`] when the slices differ in length; otherwise as
/// [`radix_sort`].
///
/// # Examples
/// ```
/// use std::mem::MaybeUninit;
/// use gpu_primitives::{sort_into, Exec};
/// let src = [2.5f32, f32::NAN, -1.0, -0.0, 0.0];
/// let mut dst = vec![MaybeUninit::<f32>::uninit(); src.len()];
/// sort_into(&src, &mut dst, Exec::Cpu)?;
/// // SAFETY: sort_into wrote every slot.
/// let dst: Vec<f32> = dst.into_iter().map(|x| unsafe { x.assume_init() }).collect();
/// assert_eq!(dst[..4], [-1.0, -0.0, 0.0, 2.5]);
/// assert!(dst[1].is_sign_negative() && dst[4].is_nan());
/// # Ok::<(), gpu_primitives::PrimitiveError>(())
/// ```
pub fn sort_into<K: SortKey>(
    src: &[K],
    dst: &mut [MaybeUninit<K>],
    exec: Exec,
) -> Result<Backend, PrimitiveError> {
    PrimitiveError::check_len("dst", src.len(), dst.len())?;
    let n = src.len();
    let target = exec.resolve(n as u64, GPU_THRESHOLD_SORT)?;
    // A fresh buffer: huge pages (where the kernel gives them on request) mean fewer page
    // faults on the first write below and fewer TLB misses in the sort, as numpy asks for
    // its own large arrays.
    crate::radix_cpu::advise_huge_pages(dst);
    // Signed keys are copied as they are when the vectorized sort takes them without the
    // ordered-bits transform.
    let plain = K::KIND == 0
        || !matches!(target, Target::Cpu)
        || (K::KIND == 1 && crate::simd_sort::available());
    if matches!(target, Target::Cpu) && crate::simd_sort::sort_small_into(src, dst) {
        return Ok(Backend::Cpu); // small integer keys: sorted from `src` straight into `dst`
    }
    if matches!(target, Target::Cpu)
        && K::KIND == 2
        && crate::simd_sort::sort_floats_avx2_into(src, dst, true)
    {
        // f64 on the AVX2 path: sorted as floats, the copy fused with the NaNs' pass
        return Ok(Backend::Cpu);
    }
    let write = |d: &mut [MaybeUninit<K>], s: &[K]| {
        if plain {
            d.iter_mut().zip(s).for_each(|(d, &k)| {
                d.write(k);
            });
        } else {
            wide(|| {
                d.iter_mut().zip(s).for_each(|(d, &k)| {
                    d.write(encode(k, false));
                })
            });
        }
    };
    if n < PARALLEL_SORT {
        write(dst, src);
    } else {
        const CHUNK: usize = 1 << 16;
        dst.par_chunks_mut(CHUNK)
            .zip(src.par_chunks(CHUNK))
            .for_each(|(d, s)| write(d, s));
    }
    // SAFETY: every slot of `dst` was written above; MaybeUninit<K> has K's layout.
    let keys = unsafe { std::slice::from_raw_parts_mut(dst.as_mut_ptr().cast::<K>(), n) };
    match target {
        Target::Cpu if K::KIND == 1 && plain => {
            let sorted = crate::simd_sort::sort_signed(keys, true);
            debug_assert!(sorted, "the vectorized sort was available above");
            Ok(Backend::Cpu)
        }
        Target::Cpu => {
            // floats: the vectorized sort's last stores decode (no pass of its own)
            if K::KIND == 2 && crate::simd_sort::sort_floats_decoded::<K>(as_bits_mut(keys), true) {
                return Ok(Backend::Cpu);
            }
            sort_any(as_bits_mut(keys), &mut vec![(); n]);
            if !plain {
                map_in_place(keys, |k| decode(k, false));
            }
            Ok(Backend::Cpu)
        }
        Target::Cuda(_) => sort_keys(keys, false, exec),
    }
}

/// Sorts `keys` ascending in the total order of [`SortKey`] (for floats: `-0.0` before `+0.0`,
/// NaNs last; the bits of every key are preserved). Reports where it ran.
///
/// CPU with AVX-512F and BMI2, or else AVX2 (detected at run time): an in-place vectorized
/// quicksort (compress-based partitions, ranges of up to 2048 keys out of place through a
/// stack buffer, sorting networks in registers for small ranges, the sides of partitions on
/// separate rayon threads from 2^17 keys, `sort_unstable` past a `2 log2 n` depth limit;
/// floats decoded by its last stores, or with AVX2 `f64` compared as floats);
/// equal ordered bits are identical keys, so the unstable sort cannot be told from a stable
/// one. Other CPUs (and `WARPATH_SIMD_SORT=off`): LSD radix
/// sort with 8-bit digits on all rayon threads; one upfront read builds the
/// histograms of all digits and passes whose digit is the same for every key are skipped (so
/// small numbers in wide types cost fewer passes); below 4096 keys a comparison sort on one
/// thread. GPU: Onesweep (one histogram pass, then one look-back scatter pass per digit).
///
/// # Complexity
/// Quicksort: `O(n log n)` expected work, `O(n^2)` never (the depth limit), `O(log n)` extra
/// memory. Radix sort: `O(n * w / 8)` work for `w`-bit keys (`w / 8` passes at most), `O(n)`
/// extra memory.
///
/// # Errors
/// [`PrimitiveError::Gpu`] when `exec` asks for a GPU that is missing, the keys do not fit in
/// device memory (with sizes), or a launch fails.
///
/// # Examples
/// ```
/// use gpu_primitives::{radix_sort, Exec};
/// let mut v = vec![3.5f32, -0.0, f32::NAN, 0.0, -2.0];
/// radix_sort(&mut v, Exec::Cpu)?;
/// assert_eq!(v[..4], [-2.0, -0.0, 0.0, 3.5]);
/// assert!(v[0..2].iter().all(|x| !x.is_nan()) && v[4].is_nan());
/// assert!(v[1].is_sign_negative() && v[2].is_sign_positive());
/// # Ok::<(), gpu_primitives::PrimitiveError>(())
/// ```
pub fn radix_sort<K: SortKey>(keys: &mut [K], exec: Exec) -> Result<Backend, PrimitiveError> {
    sort_keys(keys, false, exec)
}

/// Sorts `keys` descending: the exact reverse of [`radix_sort`]'s order (so NaNs first).
///
/// # Complexity
/// As [`radix_sort`].
///
/// # Errors
/// As [`radix_sort`].
///
/// # Examples
/// ```
/// use gpu_primitives::{radix_sort_desc, Exec};
/// let mut v = vec![3i64, -1, 7, 0];
/// radix_sort_desc(&mut v, Exec::Cpu)?;
/// assert_eq!(v, [7, 3, 0, -1]);
/// # Ok::<(), gpu_primitives::PrimitiveError>(())
/// ```
pub fn radix_sort_desc<K: SortKey>(keys: &mut [K], exec: Exec) -> Result<Backend, PrimitiveError> {
    sort_keys(keys, true, exec)
}

fn sort_keys<K: SortKey>(
    keys: &mut [K],
    desc: bool,
    exec: Exec,
) -> Result<Backend, PrimitiveError> {
    match exec.resolve(keys.len() as u64, GPU_THRESHOLD_SORT)? {
        Target::Cpu => {
            let mut unit = vec![(); keys.len()];
            cpu_sort(keys, &mut unit, desc);
            Ok(Backend::Cpu)
        }
        Target::Cuda(gpu) => {
            if keys.len() > 1 {
                let d = gpu.upload(keys)?;
                let (sorted, _) = crate::cuda::sort::<K, u32>(gpu, d, None, desc)?;
                gpu.download_into(&sorted, keys)?;
            }
            Ok(Backend::Cuda)
        }
    }
}

/// Sorts `keys` ascending and applies the same permutation to `values` (any `Copy` type). The
/// sort is **stable**: pairs with equal keys keep their input order.
///
/// GPU: the keys are sorted together with `u32` indices on the device and the values are then
/// gathered on the host (so any value type works; for 4- and 8-byte values already on the
/// device, [`crate::device::radix_sort_pairs`] moves them on the GPU).
///
/// # Complexity
/// `O(n * w / 8)` work for `w`-bit keys, `O(n)` extra memory.
///
/// # Errors
/// [`PrimitiveError::LengthMismatch`] when the slices differ in length;
/// [`PrimitiveError::TooManyForU32Index`] on the GPU path above `u32::MAX` elements;
/// [`PrimitiveError::Gpu`] when the GPU path fails.
///
/// # Examples
/// ```
/// use gpu_primitives::{radix_sort_pairs, Exec};
/// let mut keys = vec![2u32, 1, 2, 0];
/// let mut vals = vec!['a', 'b', 'c', 'd'];
/// radix_sort_pairs(&mut keys, &mut vals, Exec::Cpu)?;
/// assert_eq!(keys, [0, 1, 2, 2]);
/// assert_eq!(vals, ['d', 'b', 'a', 'c']); // 'a' before 'c': stable
/// # Ok::<(), gpu_primitives::PrimitiveError>(())
/// ```
pub fn radix_sort_pairs<K: SortKey, V: Copy + Send + Sync>(
    keys: &mut [K],
    values: &mut [V],
    exec: Exec,
) -> Result<Backend, PrimitiveError> {
    sort_pairs(keys, values, false, exec)
}

/// Stable descending sort of pairs: the reverse of [`radix_sort_pairs`]'s key order, with equal
/// keys still in input order.
///
/// # Complexity
/// As [`radix_sort_pairs`].
///
/// # Errors
/// As [`radix_sort_pairs`].
///
/// # Examples
/// ```
/// use gpu_primitives::{radix_sort_pairs_desc, Exec};
/// let mut keys = vec![1.0f64, 3.0, 1.0];
/// let mut vals = vec![0u8, 1, 2];
/// radix_sort_pairs_desc(&mut keys, &mut vals, Exec::Cpu)?;
/// assert_eq!((keys, vals), (vec![3.0, 1.0, 1.0], vec![1, 0, 2]));
/// # Ok::<(), gpu_primitives::PrimitiveError>(())
/// ```
pub fn radix_sort_pairs_desc<K: SortKey, V: Copy + Send + Sync>(
    keys: &mut [K],
    values: &mut [V],
    exec: Exec,
) -> Result<Backend, PrimitiveError> {
    sort_pairs(keys, values, true, exec)
}

fn sort_pairs<K: SortKey, V: Copy + Send + Sync>(
    keys: &mut [K],
    values: &mut [V],
    desc: bool,
    exec: Exec,
) -> Result<Backend, PrimitiveError> {
    PrimitiveError::check_len("values", keys.len(), values.len())?;
    match exec.resolve(keys.len() as u64, GPU_THRESHOLD_SORT)? {
        Target::Cpu => {
            cpu_sort(keys, values, desc);
            Ok(Backend::Cpu)
        }
        Target::Cuda(gpu) => {
            let perm = gpu_argsort(gpu, keys, desc, None)?;
            gather_in_place(values, &perm);
            Ok(Backend::Cuda)
        }
    }
}

/// Argsort on the GPU. Without an equality the sorted keys are copied back into `keys` (a pair
/// sort in the total order); with one, keys equal under it keep their index order and `keys`
/// is left as it is.
fn gpu_argsort<K: SortKey>(
    gpu: &gpu_runtime::Gpu,
    keys: &mut [K],
    desc: bool,
    ties: Option<Equality>,
) -> Result<Vec<u32>, PrimitiveError> {
    let n = keys.len();
    if n > u32::MAX as usize {
        return Err(PrimitiveError::TooManyForU32Index { n });
    }
    if n <= 1 {
        return Ok((0..n as u32).collect());
    }
    let mut dk = gpu.upload(keys)?;
    if ties == Some(Equality::Numeric) {
        crate::cuda::float_classes(gpu, &mut dk)?;
    }
    let idx = crate::cuda::iota(gpu, n)?;
    let (sk, si) = crate::cuda::sort::<K, u32>(gpu, dk, Some(idx), desc)?;
    let perm = match si {
        Some(si) => gpu.download(&si)?,
        None => unreachable!("values were given"),
    };
    if ties.is_none() {
        gpu.download_into(&sk, keys)?;
    }
    Ok(perm)
}

/// `values = values[perm]` (perm is a permutation of `0..n`).
fn gather_in_place<V: Copy + Send + Sync>(values: &mut [V], perm: &[u32]) {
    let src = values.to_vec();
    if values.len() < PARALLEL_SORT {
        for (v, &p) in values.iter_mut().zip(perm) {
            *v = src[p as usize];
        }
    } else {
        values
            .par_iter_mut()
            .zip(perm.par_iter())
            .for_each(|(v, &p)| *v = src[p as usize]);
    }
}

/// The permutation that sorts `keys` stably, as numpy's `argsort(keys, kind="stable")`:
/// `keys[perm[0]]` is the smallest key, every NaN comes last, and keys that compare equal as
/// numbers (`-0.0` and `+0.0`, any two NaNs, and of course equal bits) appear in index order.
/// `keys` is not modified.
///
/// (The key sorts, [`radix_sort`] and [`radix_sort_pairs`], must put `-0.0` and `+0.0`
/// somewhere and follow the total order of [`SortKey`] there: every `-0.0` first. A pair sort
/// with indices as values gives that permutation.)
///
/// # Complexity
/// `O(n * w / 8)` work for `w`-bit keys (a pair sort with `u32` indices).
///
/// # Errors
/// [`PrimitiveError::TooManyForU32Index`] above `u32::MAX` keys; [`PrimitiveError::Gpu`] when
/// the GPU path fails.
///
/// # Examples
/// ```
/// use gpu_primitives::{argsort, Exec};
/// assert_eq!(argsort(&[30i32, -5, 30, 0], Exec::Cpu)?, vec![1, 3, 0, 2]);
/// // numpy: np.argsort([0.0, nan, -0.0, -1.0, -nan], kind="stable") == [3, 0, 2, 1, 4]
/// let x = [0.0f64, f64::NAN, -0.0, -1.0, -f64::NAN];
/// assert_eq!(argsort(&x, Exec::Cpu)?, vec![3, 0, 2, 1, 4]);
/// # Ok::<(), gpu_primitives::PrimitiveError>(())
/// ```
pub fn argsort<K: SortKey>(keys: &[K], exec: Exec) -> Result<Vec<u32>, PrimitiveError> {
    let n = keys.len();
    if n > u32::MAX as usize {
        return Err(PrimitiveError::TooManyForU32Index { n });
    }
    match exec.resolve(n as u64, GPU_THRESHOLD_SORT)? {
        Target::Cpu => Ok(argsort_cpu(keys, Equality::Numeric).1),
        Target::Cuda(gpu) => {
            let mut copy = keys.to_vec();
            gpu_argsort(gpu, &mut copy, false, Some(Equality::Numeric))
        }
    }
}

/// [`argsort`] written into `dst` as `i64` (numpy's index type), the door for callers that
/// return numpy's `argsort`: no `u32` vector to widen afterwards. `dst` may be uninitialised
/// (a fresh output buffer); every slot is written.
///
/// On the CPU with the vectorized sort (AVX-512 or AVX2), keys are sorted as one 8-byte word
/// each, in `dst` itself: the key's numeric class (its differing bits, as many as fit) above
/// its index. The words are distinct and the index breaks ties, so the unstable vectorized
/// sort gives the stable permutation; keys whose words tie in the class bits kept are sorted
/// again by the rest (see `argsort_packed`). Without it: the LSD radix argsort, widened.
///
/// # Complexity
/// As [`argsort`]; with the vectorized sort `O(n log n)` expected work and no extra memory
/// (runs of keys equal in their kept bits: a second sort of each run).
///
/// # Errors
/// [`PrimitiveError::LengthMismatch`] when the slices differ in length; otherwise as
/// [`argsort`].
///
/// # Examples
/// ```
/// use std::mem::MaybeUninit;
/// use gpu_primitives::{argsort_into, Exec};
/// let keys = [0.0f32, f32::NAN, -0.0, -1.0, -f32::NAN];
/// let mut dst = vec![MaybeUninit::<i64>::uninit(); keys.len()];
/// argsort_into(&keys, &mut dst, Exec::Cpu)?;
/// // SAFETY: argsort_into wrote every slot.
/// let perm: Vec<i64> = dst.into_iter().map(|x| unsafe { x.assume_init() }).collect();
/// assert_eq!(perm, [3, 0, 2, 1, 4]); // np.argsort(keys, kind="stable")
/// # Ok::<(), gpu_primitives::PrimitiveError>(())
/// ```
pub fn argsort_into<K: SortKey>(
    keys: &[K],
    dst: &mut [MaybeUninit<i64>],
    exec: Exec,
) -> Result<Backend, PrimitiveError> {
    PrimitiveError::check_len("dst", keys.len(), dst.len())?;
    let n = keys.len();
    if n > u32::MAX as usize {
        return Err(PrimitiveError::TooManyForU32Index { n });
    }
    let widen = |perm: &[u32], dst: &mut [MaybeUninit<i64>]| {
        let w = |(d, &p): (&mut MaybeUninit<i64>, &u32)| {
            d.write(i64::from(p));
        };
        if n < PARALLEL_SORT {
            dst.iter_mut().zip(perm).for_each(w);
        } else {
            dst.par_iter_mut().zip(perm).for_each(w);
        }
    };
    match exec.resolve(n as u64, GPU_THRESHOLD_SORT)? {
        Target::Cpu => {
            if n > 0 && crate::simd_sort::available() {
                argsort_packed(keys, dst);
            } else {
                widen(&argsort_cpu(keys, Equality::Numeric).1, dst);
            }
            Ok(Backend::Cpu)
        }
        Target::Cuda(gpu) => {
            let mut copy = keys.to_vec();
            widen(
                &gpu_argsort(gpu, &mut copy, false, Some(Equality::Numeric))?,
                dst,
            );
            Ok(Backend::Cuda)
        }
    }
}

/// Runs `f` compiled for AVX-512, or AVX2, when the CPU has it: the loops `f` inlines
/// (passes over keys and words) vectorise to wide registers instead of the baseline's SSE2.
#[inline(always)]
pub(crate) fn wide<R>(f: impl FnOnce() -> R) -> R {
    #[cfg(target_arch = "x86_64")]
    {
        #[target_feature(enable = "avx512f,avx512vl,avx512bw,avx512dq,avx2,fma,bmi2,popcnt")]
        unsafe fn avx512<R>(f: impl FnOnce() -> R) -> R {
            f()
        }
        #[target_feature(enable = "avx2,fma,bmi2,popcnt")]
        unsafe fn avx2<R>(f: impl FnOnce() -> R) -> R {
            f()
        }
        if gpu_runtime::cpu::has_avx512() {
            // SAFETY: the CPU has these features (detected at run time).
            return unsafe { avx512(f) };
        }
        if gpu_runtime::cpu::has_avx2() {
            // SAFETY: as above.
            return unsafe { avx2(f) };
        }
    }
    f()
}

/// The stable permutation of `keys` (`1 <= n <= 2^32`) by the vectorized sort of one 8-byte
/// word per key, written in `dst`: the key's numeric class above its index. The index takes
/// `b = ceil(log2 n)` bits, which leaves `64 - b` bits for the class, of which only the bits
/// that differ between keys count (the bits all keys share are dropped). When the class's
/// differing bits fit (always for 4-byte keys) the sorted words are the stable permutation
/// already: every word is distinct and the index breaks ties. Otherwise the words hold the
/// class's top `64 - b` differing bits, and each run of words equal there (rare for real
/// data: keys that agree in their top `64 - b` differing bits, or equal keys) is sorted again
/// by the remaining low bits, at most `b` of them, above the index.
fn argsort_packed<K: SortKey>(keys: &[K], dst: &mut [MaybeUninit<i64>]) {
    let n = keys.len();
    debug_assert!(n >= 1 && n as u64 <= 1 << 32 && dst.len() == n);
    const CHUNK: usize = 1 << 16;
    let parallel = n >= PARALLEL_SORT;
    let class = |k: &K| Equality::Numeric.class::<K>(k.to_ordered()).to_u64();
    let idx_bits = usize::BITS - (n - 1).leading_zeros(); // 0 for one key
    let idx_mask = (1u64 << idx_bits) - 1;
    let words_for = |high: u32| {
        let keep = if high == 64 {
            u64::MAX
        } else {
            (1u64 << high) - 1
        };
        let shift = high.saturating_sub(64 - idx_bits); // low class bits left out
        (keep, shift)
    };
    // Words for classes differing in all their bits, and (8-byte keys) the bits in which they
    // do differ, in one pass; a second pass when some high bits turn out shared by every key.
    let pack = |high: u32, base: usize, d: &mut [MaybeUninit<i64>], s: &[K], c0: u64| {
        let (keep, shift) = words_for(high);
        let mut diff = 0u64;
        for (i, (d, k)) in d.iter_mut().zip(s).enumerate() {
            let c = class(k);
            diff |= c ^ c0;
            d.write(((((c & keep) >> shift) << idx_bits) | (base + i) as u64) as i64);
        }
        diff
    };
    let pack_all = |high: u32, dst: &mut [MaybeUninit<i64>]| {
        let c0 = class(&keys[0]);
        wide(|| {
            if parallel {
                dst.par_chunks_mut(CHUNK)
                    .zip(keys.par_chunks(CHUNK))
                    .enumerate()
                    .map(|(c, (d, s))| wide(|| pack(high, c * CHUNK, d, s, c0)))
                    .reduce(|| 0, |a, b| a | b)
            } else {
                pack(high, 0, dst, keys, c0)
            }
        })
    };
    let bits = 8 * size_of::<K>() as u32;
    let mut high = bits;
    let diff = pack_all(high, dst);
    if bits == 64 && diff.leading_zeros() > 0 {
        high = 64 - diff.leading_zeros();
        if words_for(high).1 < words_for(64).1 {
            pack_all(high, dst); // fewer bits left out: fewer runs to sort again (often none)
        } else {
            high = 64;
        }
    }
    let (keep, shift) = words_for(high);
    // SAFETY: every slot was written above; MaybeUninit<i64> has u64's layout.
    let words = unsafe { std::slice::from_raw_parts_mut(dst.as_mut_ptr().cast::<u64>(), n) };
    let sorted = crate::simd_sort::sort_unsigned(words, true);
    debug_assert!(sorted, "the caller checked the vectorized sort");
    if shift > 0 {
        let low = (1u64 << shift) - 1;
        let runs = equal_runs(words, idx_bits, parallel);
        let fix = |run: &mut [u64]| {
            for w in run.iter_mut() {
                let i = *w & idx_mask;
                *w = (((class(&keys[i as usize]) & keep) & low) << idx_bits) | i;
            }
            if run.len() < 64 {
                run.sort_unstable();
            } else {
                crate::simd_sort::sort_unsigned(run, true);
            }
        };
        if parallel && runs.len() > 1 {
            let base = crate::radix_cpu::SendPtr(words.as_mut_ptr());
            runs.par_iter().for_each(|r| {
                // SAFETY: the runs are disjoint ranges inside `words`, each fixed by one task.
                fix(unsafe { std::slice::from_raw_parts_mut(base.get().add(r.start), r.len()) })
            });
        } else {
            for r in runs {
                fix(&mut words[r]);
            }
        }
    }
    let unpack = |w: &mut [u64]| w.iter_mut().for_each(|x| *x &= idx_mask);
    wide(|| {
        if parallel {
            words.par_chunks_mut(CHUNK).for_each(|w| wide(|| unpack(w)));
        } else {
            unpack(words);
        }
    });
}

/// The runs (of at least two) of consecutive `words` equal above their low `low_bits` bits;
/// chunks are scanned in parallel, each reporting the runs that start in it.
fn equal_runs(words: &[u64], low_bits: u32, parallel: bool) -> Vec<std::ops::Range<usize>> {
    let n = words.len();
    let same = |j: usize| (words[j] ^ words[j - 1]) >> low_bits == 0;
    // Whether any word of `lo..hi` (lo >= 1) equals the one before: a branch-free count
    // that vectorises, so that blocks without a run are skipped at memory speed.
    let any = |lo: usize, hi: usize| {
        words[lo - 1..hi]
            .windows(2)
            .map(|w| ((w[0] ^ w[1]) >> low_bits == 0) as u32)
            .sum::<u32>()
            > 0
    };
    let scan = |lo: usize, hi: usize| {
        let mut runs = Vec::new();
        let mut j = lo.max(1);
        // A run belongs to the chunk holding its first `same(j)`, whose scan follows it past
        // its own end; a run whose first `same` is `same(lo)` itself (starting at `lo - 1`)
        // is this chunk's.
        if lo > 1 && same(lo - 1) {
            while j < hi && same(j) {
                j += 1;
            }
        }
        while j < hi {
            const BLOCK: usize = 256;
            let end = (j + BLOCK).min(hi);
            if !any(j, end) {
                j = end;
                continue;
            }
            while j < end {
                if same(j) {
                    let start = j - 1;
                    while j < n && same(j) {
                        j += 1;
                    }
                    runs.push(start..j);
                } else {
                    j += 1;
                }
            }
        }
        runs
    };
    const CHUNK: usize = 1 << 16;
    wide(|| {
        if parallel {
            (0..n.div_ceil(CHUNK))
                .into_par_iter()
                .flat_map_iter(|c| wide(|| scan(c * CHUNK, ((c + 1) * CHUNK).min(n))))
                .collect()
        } else {
            scan(0, n)
        }
    })
}

/// The classes of `keys` under `equality` (ordered bits for [`Equality::Bitwise`]) sorted,
/// with the stable permutation (n <= u32::MAX checked by callers).
pub(crate) fn argsort_cpu<K: SortKey>(keys: &[K], equality: Equality) -> (Vec<K::Bits>, Vec<u32>) {
    let n = keys.len();
    let class = |k: &K| equality.class::<K>(k.to_ordered());
    let mut bits: Vec<K::Bits> = if n < PARALLEL_SORT {
        keys.iter().map(class).collect()
    } else {
        keys.par_iter().map(class).collect()
    };
    let mut perm: Vec<u32> = if n < PARALLEL_SORT {
        (0..n as u32).collect()
    } else {
        (0..n as u32).into_par_iter().collect()
    };
    sort_bits(&mut bits, &mut perm);
    (bits, perm)
}

/// Sorted ordered bits of `keys` (a copy), on the CPU.
pub(crate) fn sorted_bits_cpu<K: SortKey>(keys: &[K]) -> Vec<K::Bits> {
    let n = keys.len();
    // a fresh buffer on huge pages (fewer page faults and TLB misses), written once
    let mut bits: Vec<K::Bits> = Vec::with_capacity(n);
    crate::radix_cpu::advise_huge_pages(&mut bits.spare_capacity_mut()[..n]);
    let write = |d: &mut [MaybeUninit<K::Bits>], s: &[K]| {
        d.iter_mut().zip(s).for_each(|(d, k)| {
            d.write(k.to_ordered());
        });
    };
    let dst = &mut bits.spare_capacity_mut()[..n];
    if n < PARALLEL_SORT {
        write(dst, keys);
    } else {
        // plain loops over large chunks (they vectorise; rayon's per-item collect did not)
        const CHUNK: usize = 1 << 16;
        dst.par_chunks_mut(CHUNK)
            .zip(keys.par_chunks(CHUNK))
            .for_each(|(d, s)| write(d, s));
    }
    // SAFETY: every one of the first `n` slots was written above.
    unsafe { bits.set_len(n) };
    sort_any(&mut bits, &mut vec![(); n]);
    bits
}

/// Number of 8-bit passes a sort of these keys needs after skipping constant digits (for
/// reports; the sort computes it itself).
///
/// # Complexity
/// `O(n)` (one parallel read).
///
/// # Examples
/// ```
/// use gpu_primitives::radix_passes_needed;
/// // values below 1000 differ only in their two low bytes
/// assert_eq!(radix_passes_needed(&[3u64, 999, 512]), 2);
/// ```
pub fn radix_passes_needed<K: SortKey>(keys: &[K]) -> usize {
    let Some(first) = keys.first() else { return 0 };
    let f = first.to_ordered();
    let diff = keys
        .par_iter()
        .map(|k| k.to_ordered().to_u64() ^ f.to_u64())
        .reduce(|| 0, |a, b| a | b);
    (0..<K::Bits as RadixBits>::DIGITS)
        .filter(|p| (diff >> (8 * p)) & 0xFF != 0)
        .count()
}
