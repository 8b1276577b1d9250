//! Vectorized quicksort of ordered bits (`u32`, `u64`) on the CPU, chosen at run time.
//!
//! On x86-64 with AVX-512 (`gpu_runtime::cpu::has_avx512`, off under
//! `WARPATH_DISABLE_AVX512`) [`avx512`] sorts in place: a vectorized partition and
//! in-register networks for small ranges (ranges of up to 2048 keys out of place, through a
//! buffer on the stack), the two sides of large partitions on separate rayon threads. With
//! AVX2 only, [`avx2`] does the same on 256-bit registers; [`small_oop`] holds the level of
//! the out-of-place sort of small ranges that both expand. Elsewhere [`sort_unsigned`]
//! returns `false` and the caller uses the LSD radix sort (`radix_cpu`), which is portable.
//! `WARPATH_SIMD_SORT` (read once) overrides the choice: `avx2` picks the AVX2 path on a CPU
//! that also has AVX-512, `off` the radix sort.
//!
//! Signed integers are sorted as themselves (signed compares); unsigned integers and the
//! ordered bits of floats as unsigned.
//!
//! Key sorts use it (equal ordered bits are identical keys, so an unstable sort cannot be
//! told from a stable one), and so does `argsort_into`, through words that make every key
//! distinct. Pair sorts stay on the radix sort.

/// All-ones mask of the first `n` lanes of a register.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn first(n: usize) -> u32 {
    ((1u64 << n) - 1) as u32
}

/// Lanes `l` with `l & d != 0`, for `d` a power of two below 16 (0 for larger `d`); for a
/// register of fewer lanes, masked by [`first`].
#[cfg(target_arch = "x86_64")]
#[inline(always)]
const fn upper(d: usize) -> u32 {
    match d {
        1 => 0xAAAA,
        2 => 0xCCCC,
        4 => 0xF0F0,
        8 => 0xFF00,
        _ => 0,
    }
}

/// Batcher's odd–even merge sort network on `N` inputs (`N` a power of two) with its `C`
/// comparators, in an order that respects their dependencies: each pair `(a, b)`, `a < b`, puts
/// the smaller key at `a`.
#[cfg(target_arch = "x86_64")]
const fn batcher<const N: usize, const C: usize>() -> [(usize, usize); C] {
    let mut out = [(0, 0); C];
    let mut c = 0;
    let mut p = 1;
    while p < N {
        let mut k = p;
        while k >= 1 {
            let mut j = k % p;
            while j + k < N {
                let mut i = 0;
                while i < k && i + j + k < N {
                    if (i + j) / (2 * p) == (i + j + k) / (2 * p) {
                        out[c] = (i + j, i + j + k);
                        c += 1;
                    }
                    i += 1;
                }
                j += 2 * k;
            }
            k /= 2;
        }
        p *= 2;
    }
    assert!(c == C, "comparator count");
    out
}

/// Batcher's networks on 2, 4, 8 and 16 inputs: the column sorts of the networks.
#[cfg(target_arch = "x86_64")]
const COLUMNS_2: [(usize, usize); 1] = batcher::<2, 1>();
#[cfg(target_arch = "x86_64")]
const COLUMNS_4: [(usize, usize); 5] = batcher::<4, 5>();
#[cfg(target_arch = "x86_64")]
const COLUMNS_8: [(usize, usize); 19] = batcher::<8, 19>();
#[cfg(target_arch = "x86_64")]
const COLUMNS_16: [(usize, usize); 63] = batcher::<16, 63>();

/// The in-register sorting network of one instruction set, on registers `$reg` of the
/// invoking module's `Lane` type (with [`first`] and [`upper`] in scope), built on the
/// module's `exchange::<T>(v, p, take_max)` (lane-wise min of `v` and its partner register
/// `p`, the max in the lanes of `take_max`) and `reverse_blocks::<T>(v, s)` (lanes reversed
/// inside blocks of `s`): `step_all`, `across`, `merge_blocks` and `network`, the layout of
/// `x86-simd-sort`'s networks. None carries a `#[target_feature]`; all are always inlined, so
/// they may only be called from functions that enable the module's instruction set.
#[cfg(target_arch = "x86_64")]
macro_rules! network_helpers {
    ($reg:ty) => {
        /// One in-register compare-exchange step on every register, lanes `l` and `l ^ d`
        /// (in lockstep, so that the independent chains of the registers interleave).
        #[inline(always)]
        unsafe fn step_all<T: Lane, const K: usize>(r: &mut [$reg; K], d: usize, take_max: u32) {
            for x in r.iter_mut() {
                // SAFETY: the caller has the module's instruction set (see the note above).
                *x = unsafe { exchange::<T>(*x, T::xor_lanes(*x, d), take_max) };
            }
        }

        /// One level of the cross-register half of merging at lane-block width `S`: in each
        /// block of `M` registers, the upper half reversed inside its lane blocks and register
        /// `i` compare-exchanged with `M - 1 - i`.
        #[inline(always)]
        unsafe fn across<T: Lane, const K: usize, const S: usize, const M: usize>(
            r: &mut [$reg; K],
        ) {
            // SAFETY: the caller has the module's instruction set (see the note above).
            unsafe {
                for b in (0..K).step_by(M) {
                    for i in 0..M / 2 {
                        let (x, y) = (r[b + i], reverse_blocks::<T>(r[b + M - 1 - i], S));
                        r[b + i] = T::vmin(x, y);
                        r[b + M - 1 - i] = T::vmax(x, y);
                    }
                }
            }
        }

        /// Merges the sorted sequences of each pair of lane blocks `S / 2` wide into one of
        /// `S` lanes (row-major inside the block): [`across`] at every register-block size
        /// from `K` down to 2, then the block's halves ordered in each register by reversing
        /// one against the other, then smaller lane distances as in a bitonic merge.
        #[inline(always)]
        unsafe fn merge_blocks<T: Lane, const K: usize, const S: usize>(r: &mut [$reg; K]) {
            if S > T::LANES {
                return;
            }
            let all = first(T::LANES);
            // SAFETY: the caller has the module's instruction set (see the note above).
            unsafe {
                if K >= 16 {
                    across::<T, K, S, 16>(r);
                }
                if K >= 8 {
                    across::<T, K, S, 8>(r);
                }
                if K >= 4 {
                    across::<T, K, S, 4>(r);
                }
                if K >= 2 {
                    across::<T, K, S, 2>(r);
                }
                for x in r.iter_mut() {
                    *x = exchange::<T>(*x, reverse_blocks::<T>(*x, S), upper(S / 2) & all);
                }
                let mut d = S / 4;
                while d >= 1 {
                    step_all::<T, K>(r, d, upper(d) & all);
                    d /= 2;
                }
            }
        }

        /// Sorts the `K * LANES` keys held in `r` (`K` a power of two up to 16) into
        /// row-major order (register by register, lane by lane): each lane sorted down the
        /// registers by Batcher's network (lane-wise min and max, no shuffles), then the
        /// sorted columns merged in lane blocks of 2, 4, ... lanes ([`merge_blocks`]): the
        /// shuffles are only in the last `log2(LANES)` merges (3 in-register steps in all
        /// with 4 lanes), the rest lane-wise min and max.
        #[inline(always)]
        unsafe fn network<T: Lane, const K: usize>(r: &mut [$reg; K]) {
            debug_assert!(K <= 16 && K.is_power_of_two());
            // SAFETY: the caller has the module's instruction set (see the note above).
            unsafe {
                // one compare-exchange per comparator, unrolled so that `r` stays in
                // registers (a loop over the table keeps them on the stack)
                macro_rules! columns {
                            ($table:ident, $c:literal) => {{
                                seq_macro::seq!(I in 0..$c {
                                    let (x, y) = (r[super::$table[I].0], r[super::$table[I].1]);
                                    r[super::$table[I].0] = T::vmin(x, y);
                                    r[super::$table[I].1] = T::vmax(x, y);
                                });
                            }};
                        }
                match K {
                    1 => {}
                    2 => columns!(COLUMNS_2, 1),
                    4 => columns!(COLUMNS_4, 5),
                    8 => columns!(COLUMNS_8, 19),
                    _ => columns!(COLUMNS_16, 63),
                }
                merge_blocks::<T, K, 2>(r);
                merge_blocks::<T, K, 4>(r);
                merge_blocks::<T, K, 8>(r);
                merge_blocks::<T, K, 16>(r);
            }
        }
    };
}

/// The level of the out-of-place sort of small ranges both instruction sets share.
#[cfg(target_arch = "x86_64")]
#[macro_use]
mod small_oop;
#[cfg(target_arch = "x86_64")]
mod avx2;
#[cfg(target_arch = "x86_64")]
mod avx512;

use crate::key::{RadixBits, SortKey};

/// The vectorized sort this process runs.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Path {
    /// 512-bit registers (AVX-512F, POPCNT and BMI2).
    Avx512,
    /// 256-bit registers (AVX2).
    Avx2,
    /// None: the radix sort.
    Portable,
}

/// AVX-512 where the CPU has it, else AVX2, else the radix sort; `WARPATH_SIMD_SORT=avx2`
/// picks the AVX2 path on a CPU with AVX2 and `off` the radix sort. Decided once per process.
pub(crate) fn path() -> Path {
    static PATH: std::sync::OnceLock<Path> = std::sync::OnceLock::new();
    *PATH.get_or_init(|| {
        let (wide, narrow) = detect();
        match std::env::var("WARPATH_SIMD_SORT").as_deref() {
            Ok("off") => Path::Portable,
            Ok("avx2") if narrow => Path::Avx2,
            Ok("avx2") => Path::Portable,
            _ if wide => Path::Avx512,
            _ if narrow => Path::Avx2,
            _ => Path::Portable,
        }
    })
}

/// Whether this CPU has (AVX-512F, POPCNT and BMI2; AVX2 and POPCNT).
fn detect() -> (bool, bool) {
    #[cfg(target_arch = "x86_64")]
    {
        (gpu_runtime::cpu::has_avx512(), gpu_runtime::cpu::has_avx2())
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        (false, false)
    }
}

/// From this many keys the quicksort runs on all rayon threads (the two sides of each
/// partition of at least 2^14 keys on separate threads). Below it, a sort of well under a
/// millisecond, waking a second thread costs more than it saves on a loaded machine: 10^5 u32
/// on 2 threads 0.177 ms, on one 0.161 ms.
const PARALLEL_QUICKSORT: usize = 1 << 17;

/// Whether this process runs a vectorized sort.
pub(crate) fn available() -> bool {
    path() != Path::Portable
}

/// Sorts `keys` ascending with the vectorized quicksort when this CPU has it (on all rayon
/// threads when `parallel`); returns `false`, leaving `keys` untouched, when it does not.
pub(crate) fn sort_unsigned<B: RadixBits>(keys: &mut [B], parallel: bool) -> bool {
    // SAFETY: RadixBits is sealed to u32 and u64.
    unsafe { sort_as(keys, Keys::Unsigned, parallel) }
}

/// What [`sort_as`] sorts: `u32`/`u64` keys, the ordered bits of `f32`/`f64` (decoded in their
/// final place), or `i32`/`i64` keys, the width by the size of the key type.
#[derive(Clone, Copy)]
enum Keys {
    Unsigned,
    FloatBits,
    Signed,
}

/// The vectorized quicksort of `keys` as the [`Keys`] `what` of their size (see [`run`]);
/// `false` (keys untouched) without it.
///
/// # Safety
/// `S` is the 4- or 8-byte type `what` names.
unsafe fn sort_as<S>(keys: &mut [S], what: Keys, parallel: bool) -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        use avx512::{DecodeF32, DecodeF64, Keep};
        // SAFETY: `S` is the type of each arm (the caller's contract).
        unsafe {
            match (what, size_of::<S>() == 8) {
                (Keys::Unsigned, false) => run::<u32, Keep>(cast(keys), parallel),
                (Keys::Unsigned, true) => run::<u64, Keep>(cast(keys), parallel),
                (Keys::FloatBits, false) => run::<u32, DecodeF32>(cast(keys), parallel),
                (Keys::FloatBits, true) => run::<u64, DecodeF64>(cast(keys), parallel),
                (Keys::Signed, false) => run::<i32, Keep>(cast(keys), parallel),
                (Keys::Signed, true) => run::<i64, Keep>(cast(keys), parallel),
            }
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (keys, what, parallel);
        false
    }
}

/// Sorts the ordered bits of floats (`K::KIND == 2`) ascending and leaves every slot holding
/// the bits of its float, `K::from_ordered` fused into the sort's last stores (which saves a
/// pass over the keys); `false`, leaving `bits` untouched, without the vectorized sort.
pub(crate) fn sort_floats_decoded<K: SortKey>(bits: &mut [K::Bits], parallel: bool) -> bool {
    assert_eq!(K::KIND, 2, "float keys only");
    // SAFETY: a float SortKey is f32 or f64, whose Bits are u32 and u64 (sealed traits).
    unsafe { sort_as(bits, Keys::FloatBits, parallel) }
}

/// Sorts `f64` keys (their own bits) ascending in the total order of `SortKey` with the AVX2
/// float quicksort, when that is this process's path; `false` (keys untouched) otherwise, and
/// for `f32` (sorted as ordered bits: AVX2 has a min/max of `u32`).
///
/// The NaNs are moved to the back first (and sorted there by their ordered bits, usually a
/// handful), so the rest compare as floats (`vcmppd`, `vminpd`, `vmaxpd`: cheaper than 64-bit
/// integer compares and blends of ordered bits, which AVX2 has no min/max for). Floats see
/// `-0.0` and `+0.0` as equal and a compare-exchange may turn one into the other, so the run
/// of zeros is rewritten afterwards from the count of `-0.0` taken in the first pass: every
/// `-0.0` first, as the total order has them. Every key keeps its bits.
pub(crate) fn sort_floats_avx2<K: SortKey>(keys: &mut [K], parallel: bool) -> bool {
    let (p, n) = (keys.as_mut_ptr(), keys.len());
    // SAFETY: the keys are both the source and the destination.
    unsafe { sort_floats_avx2_from(p, p, n, parallel) }
}

/// [`sort_floats_avx2`] of `src` into `dst` (every slot written), the copy fused with the
/// pass that moves the NaNs out; `false` (nothing written) off the AVX2 path or for `f32`.
pub(crate) fn sort_floats_avx2_into<K: SortKey>(
    src: &[K],
    dst: &mut [std::mem::MaybeUninit<K>],
    parallel: bool,
) -> bool {
    assert_eq!(src.len(), dst.len());
    // SAFETY: two distinct slices of `src.len()` keys.
    unsafe { sort_floats_avx2_from(src.as_ptr(), dst.as_mut_ptr().cast(), src.len(), parallel) }
}

/// The body of [`sort_floats_avx2`] and [`sort_floats_avx2_into`].
///
/// # Safety
/// `n` readable keys at `src`, `n` writable slots at `dst`, the same or not overlapping.
unsafe fn sort_floats_avx2_from<K: SortKey>(
    src: *const K,
    dst: *mut K,
    n: usize,
    parallel: bool,
) -> bool {
    assert_eq!(K::KIND, 2, "float keys only");
    #[cfg(target_arch = "x86_64")]
    {
        // f32 keys stay on the integer path (u32 has a min/max in AVX2)
        if path() != Path::Avx2 || size_of::<K>() == 4 {
            return false;
        }
        // SAFETY: AVX2 was detected (`path`); an 8-byte float key is f64 (sealed traits);
        // the caller's ranges.
        unsafe { sort_f64_avx2_from(src.cast(), dst.cast(), n, parallel) };
        true
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (src, dst, n, parallel);
        false
    }
}

/// [`sort_f64_avx2_from`] in place, forced (the tests' door to the AVX2 float sort).
///
/// # Safety
/// The CPU has AVX2 and POPCNT.
#[cfg(all(test, target_arch = "x86_64"))]
unsafe fn sort_f64_avx2(keys: &mut [f64], parallel: bool) {
    // SAFETY: the caller's contract; the keys are both the source and the destination.
    unsafe { sort_f64_avx2_from(keys.as_ptr(), keys.as_mut_ptr(), keys.len(), parallel) }
}

/// The AVX2 float sort of the `n` `f64` keys at `src` into the `n` slots at `dst` (every one
/// written), as [`sort_floats_avx2`] describes.
///
/// # Safety
/// The CPU has AVX2 and POPCNT; `src` and `dst` are the same or do not overlap.
#[cfg(target_arch = "x86_64")]
unsafe fn sort_f64_avx2_from(src: *const f64, dst: *mut f64, n: usize, parallel: bool) {
    // NaNs out (to a side buffer) as the keys are copied, `-0.0` counted
    let mut nans: Vec<f64> = Vec::new();
    // SAFETY: the caller's contract.
    let (m, neg_zeros) = unsafe { avx2::nans_out_f64(src, dst, n, &mut nans) };
    debug_assert_eq!(m + nans.len(), n);
    // SAFETY: the first `m` slots of `dst` were written (the NaNs go to the others below).
    let keys = unsafe { std::slice::from_raw_parts_mut(dst, m) };
    let depth = 2 * (usize::BITS - m.leading_zeros());
    let parallel = parallel && m >= PARALLEL_QUICKSORT && rayon::current_num_threads() > 1;
    // SAFETY: the caller's contract; `avx2::Float<f64>` is `f64` (repr(transparent)); no NaN
    // is left in `keys[..m]`.
    unsafe { avx2::quicksort(cast::<f64, avx2::Float<f64>>(keys), depth, parallel) };
    let a = keys.partition_point(|&k| k < 0.0);
    let b = keys.partition_point(|&k| k <= 0.0);
    keys[a..a + neg_zeros].fill(-0.0);
    keys[a + neg_zeros..b].fill(0.0);
    if !nans.is_empty() {
        let mut bits: Vec<u64> = nans.iter().map(|k| k.to_ordered()).collect();
        if !sort_unsigned(&mut bits, parallel) {
            bits.sort_unstable();
        }
        for (i, b) in bits.into_iter().enumerate() {
            // SAFETY: slot `m + i < n` of `dst` (one per NaN).
            unsafe { dst.add(m + i).write(f64::from_ordered(b)) };
        }
    }
}

/// `distinct`'s values of `f64` keys under numpy's equality with the AVX2 float sort: a copy
/// sorted as floats ([`sort_floats_avx2`]), then grouped by float compares in place (no
/// ordered bits to encode and decode). `None` off the AVX2 path or for other keys.
pub(crate) fn distinct_f64_avx2<K: SortKey>(keys: &[K], parallel: bool) -> Option<Vec<K>> {
    #[cfg(target_arch = "x86_64")]
    {
        if path() != Path::Avx2 || K::KIND != 2 || size_of::<K>() != 8 {
            return None;
        }
        let n = keys.len();
        let mut v: Vec<K> = Vec::with_capacity(n);
        // SAFETY: AVX2 was detected (`path`); an 8-byte float key is f64 (sealed traits); the
        // sort writes all `n` slots of the new buffer before `set_len`.
        unsafe {
            sort_f64_avx2_from(keys.as_ptr().cast(), v.as_mut_ptr().cast(), n, parallel);
            v.set_len(n);
            let m = avx2::group_f64(cast::<K, f64>(&mut v));
            v.truncate(m);
        }
        if v.len() < v.capacity() / 2 {
            v.shrink_to_fit();
        }
        Some(v)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (keys, parallel);
        None
    }
}

/// Sorts signed integer keys (`K::KIND == 1`: `i32` or `i64`) in their own order, without the
/// ordered-bits transform; `false` (keys untouched) without the vectorized sort.
pub(crate) fn sort_signed<K: SortKey>(keys: &mut [K], parallel: bool) -> bool {
    assert_eq!(K::KIND, 1, "signed keys only");
    // SAFETY: a signed SortKey is i32 or i64 (the trait is sealed).
    unsafe { sort_as(keys, Keys::Signed, parallel) }
}

/// Sorts the integer keys (`K::KIND` 0 or 1) of `src` into `dst` (same length) with the
/// AVX-512 sort when there are at most [`avx512::SMALL_OOP`] of them: the first partition
/// reads `src`, so no copy pass comes first. `false` (nothing written) otherwise.
pub(crate) fn sort_small_into<K: SortKey>(src: &[K], dst: &mut [std::mem::MaybeUninit<K>]) -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        let n = src.len();
        assert_eq!(n, dst.len());
        if K::KIND == 2 || n > avx512::SMALL_OOP || path() != Path::Avx512 {
            return false;
        }
        let depth = 2 * (usize::BITS - n.leading_zeros());
        let (s, d) = (src.as_ptr(), dst.as_mut_ptr());
        // SAFETY (every call): AVX-512F, POPCNT and BMI2 were detected (`path`); `K` is the
        // lane type named (sealed key traits: KIND 0 is u32/u64, KIND 1 is i32/i64, by size);
        // `src` and `dst` are distinct borrows of `n` keys and `n` slots.
        unsafe {
            match (K::KIND, size_of::<K>()) {
                (0, 4) => avx512::sort_small_oop::<u32, avx512::Keep>(s.cast(), d.cast(), n, depth),
                (0, _) => avx512::sort_small_oop::<u64, avx512::Keep>(s.cast(), d.cast(), n, depth),
                (_, 4) => avx512::sort_small_oop::<i32, avx512::Keep>(s.cast(), d.cast(), n, depth),
                _ => avx512::sort_small_oop::<i64, avx512::Keep>(s.cast(), d.cast(), n, depth),
            }
        }
        true
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (src, dst);
        false
    }
}

/// Groups the sorted ordered bits of `K` keys in place with AVX-512: the first key of every
/// run of keys equal under `equality` is written, turned back into a `K` (`from_ordered`),
/// to the front of `bits`, in order. Returns how many, or `None` (bits untouched) without
/// AVX-512.
pub(crate) fn group_sorted_bits<K: SortKey>(
    bits: &mut [K::Bits],
    equality: crate::key::Equality,
) -> Option<usize> {
    #[cfg(target_arch = "x86_64")]
    {
        use crate::key::Equality;
        if path() == Path::Avx2 && size_of::<K>() == 4 && K::KIND == 2 {
            if equality != Equality::Numeric {
                return None;
            }
            // SAFETY: AVX2 was detected (`path`); a 4-byte float key's bits are u32.
            return Some(unsafe { avx2::group_f32_bits(cast(bits)) });
        }
        if path() != Path::Avx512 {
            return None;
        }
        let numeric = K::KIND == 2 && equality == Equality::Numeric;
        // SAFETY (every call): AVX-512F, POPCNT and BMI2 were detected (`path`); the casts
        // are to `K::Bits`, u32 for 4-byte keys and u64 for 8-byte keys (sealed traits).
        unsafe {
            Some(match (size_of::<K>(), K::KIND, numeric) {
                (4, 0, _) => avx512::group_heads::<u32, avx512::Keep, avx512::SameBits>(cast(bits)),
                (4, 1, _) => {
                    avx512::group_heads::<u32, avx512::FlipSign, avx512::SameBits>(cast(bits))
                }
                (4, _, false) => {
                    avx512::group_heads::<u32, avx512::DecodeF32, avx512::SameBits>(cast(bits))
                }
                (4, _, true) => {
                    avx512::group_heads::<u32, avx512::DecodeF32, avx512::NumericF32>(cast(bits))
                }
                (_, 0, _) => avx512::group_heads::<u64, avx512::Keep, avx512::SameBits>(cast(bits)),
                (_, 1, _) => {
                    avx512::group_heads::<u64, avx512::FlipSign, avx512::SameBits>(cast(bits))
                }
                (_, _, false) => {
                    avx512::group_heads::<u64, avx512::DecodeF64, avx512::SameBits>(cast(bits))
                }
                (_, _, true) => {
                    avx512::group_heads::<u64, avx512::DecodeF64, avx512::NumericF64>(cast(bits))
                }
            })
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (bits, equality);
        None
    }
}

/// `keys` as a slice of `T`.
///
/// # Safety
/// `S` must be `T` (the callers check it through the sealed key traits).
unsafe fn cast<S, T>(keys: &mut [S]) -> &mut [T] {
    debug_assert!(size_of::<S>() == size_of::<T>() && align_of::<S>() == align_of::<T>());
    // SAFETY: S is T (the caller's contract); the borrow is exclusive.
    unsafe { std::slice::from_raw_parts_mut(keys.as_mut_ptr().cast::<T>(), keys.len()) }
}

/// The vectorized quicksort of `keys`, each key finished by `F` in its final place; `false`
/// (keys untouched) without it.
#[cfg(target_arch = "x86_64")]
fn run<T: avx512::Lane + avx2::Lane, F: avx512::Finish<T>>(keys: &mut [T], parallel: bool) -> bool {
    let path = path();
    if path == Path::Portable {
        return false;
    }
    let depth = 2 * (usize::BITS - keys.len().leading_zeros());
    let parallel = parallel && keys.len() >= PARALLEL_QUICKSORT && rayon::current_num_threads() > 1;
    if path == Path::Avx512 {
        // SAFETY: AVX-512F, POPCNT and BMI2 were detected (`path`).
        unsafe { avx512::quicksort::<T, F>(keys, depth, parallel) };
    } else {
        // SAFETY: AVX2 was detected (`path`).
        unsafe {
            if std::any::TypeId::of::<T>() == std::any::TypeId::of::<u64>() {
                // u64: sorted as i64 with the top bit flipped (AVX2 compares only signed
                // 64-bit lanes; unsigned ones take two more instructions per compare)
                let signed = cast::<T, i64>(keys);
                flip_avx2(signed);
                avx2::quicksort(&mut *signed, depth, parallel);
                flip_avx2(signed);
            } else {
                avx2::quicksort(keys, depth, parallel);
            }
            finish_all_avx2::<T, F>(keys); // a pass of its own (nothing for `Keep`)
        }
    }
    true
}

/// Flips the top bit of every key (u64 <-> i64 order), compiled for AVX2.
///
/// # Safety
/// The CPU has AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,popcnt")]
unsafe fn flip_avx2(keys: &mut [i64]) {
    keys.iter_mut().for_each(|k| *k ^= i64::MIN);
}

/// [`avx512::finish_all`] compiled for AVX2 (the loop vectorises).
///
/// # Safety
/// The CPU has AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,popcnt")]
unsafe fn finish_all_avx2<T: avx512::Lane, F: avx512::Finish<T>>(keys: &mut [T]) {
    avx512::finish_all::<T, F>(keys);
}

/// Sorts each `chunk` keys of `keys` by the AVX-512 network alone (for timing); `false` on
/// another path or when `chunk` is larger than the largest network.
pub(crate) fn sort_chunks<B: RadixBits>(keys: &mut [B], chunk: usize) -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        fn each<T: avx512::Lane>(keys: &mut [T], chunk: usize) -> bool {
            if path() != Path::Avx512 || chunk == 0 || chunk > avx512::small_max::<T>() {
                return false;
            }
            for c in keys.chunks_mut(chunk) {
                // SAFETY: AVX-512F, POPCNT and BMI2 were detected above; `c` fits the network.
                unsafe { avx512::sort_small::<T, avx512::Keep>(c) };
            }
            true
        }
        if size_of::<B>() == 4 {
            // SAFETY: B is u32 (sealed to u32 and u64, and this one is 4 bytes).
            each::<u32>(unsafe { cast(keys) }, chunk)
        } else {
            // SAFETY: B is u64.
            each::<u64>(unsafe { cast(keys) }, chunk)
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (keys, chunk);
        false
    }
}

/// One partition of `keys` at `pivot` (for timing): the split point, `None` without AVX-512.
pub(crate) fn partition_u32(keys: &mut [u32], pivot: u32) -> Option<usize> {
    if path() != Path::Avx512 || keys.len() < 32 {
        return None;
    }
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: AVX-512F, POPCNT and BMI2 were detected above; at least two registers of keys.
        Some(unsafe { avx512::partition(keys, pivot) }.0)
    }
    #[cfg(not(target_arch = "x86_64"))]
    None
}

#[cfg(all(test, target_arch = "x86_64"))]
mod tests;
