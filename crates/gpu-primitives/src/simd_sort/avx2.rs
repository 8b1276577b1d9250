//! AVX2 quicksort of `u32`, `u64`, `i32` and `i64`: the path for x86-64 CPUs without AVX-512.
//!
//! The same algorithm as [`super::avx512`] on 256-bit registers: AVX2 has no compress
//! instruction (a register's keys below the pivot are packed by `vpermd` with an index vector
//! from a table of all lane masks, the others after them), no unsigned or 64-bit min/max
//! (compares of sign-flipped keys and blends stand in) and no mask registers (masked loads
//! take a vector of lane masks; its masked stores are slow on AMD cores, so partial stores are
//! exact copies through the stack, by fixed-size moves). Partition in place: `UNROLL` (8)
//! registers per step from the end with fewer free slots, `UNROLL + 1` held at each end, so
//! that each register, permuted, goes out by two whole-register stores. Ranges of at most
//! 2048 keys are sorted out of place (a buffer on the stack) with a ninther pivot. Small
//! ranges (at most 64 keys: 8 registers of `u32`, 16 of `u64`) are sorted in registers by
//! [`network`]: the lanes sorted down the registers first, then the sorted columns merged
//! (the layout of `x86-simd-sort`'s networks). Tie handling and the depth limit are as in the AVX-512
//! path.

use std::arch::x86_64::*;

use super::{first, upper};

/// A lane type with its AVX2 register operations (all unsafe: they need AVX2).
pub(super) trait Lane: Copy + Ord + Send + Sync + 'static {
    /// Lanes per 256-bit register.
    const LANES: usize;
    /// The largest value (padding of partial registers).
    const MAX: Self;
    /// `self + 1`, `None` at `MAX`.
    fn succ(self) -> Option<Self>;
    unsafe fn splat(x: Self) -> __m256i;
    /// All-ones in the lanes where `a > b` in `Self`'s order.
    unsafe fn vgt(a: __m256i, b: __m256i) -> __m256i;
    unsafe fn vmin(a: __m256i, b: __m256i) -> __m256i;
    unsafe fn vmax(a: __m256i, b: __m256i) -> __m256i;
    /// Bit `l` set where lane `l` of the lane mask `m` is all-ones.
    unsafe fn movemask(m: __m256i) -> u32;
    /// The lane mask with lane `l` all-ones where bit `l` of `bits` is set.
    unsafe fn lane_mask(bits: u32) -> __m256i;
    /// The lanes selected by `m` in the low lanes, then the others (each in lane order).
    unsafe fn compress(m: u32, v: __m256i) -> __m256i;
    /// Loads the lanes of `mask` from `p` (zero elsewhere; masked lanes are not read).
    unsafe fn mask_load(p: *const Self, mask: __m256i) -> __m256i;
    /// Lane `l` takes lane `l ^ d` (`d` a power of two below `LANES`).
    unsafe fn xor_lanes(v: __m256i, d: usize) -> __m256i;
    /// The lanes in reverse order.
    unsafe fn reverse(v: __m256i) -> __m256i;
    /// Lane 0.
    unsafe fn lane0(v: __m256i) -> Self;
}

/// `vpermd` indices that put the lanes set in each mask of `2^(8 / W)` first (in order), then
/// the others (in order), for lanes of `W` 32-bit words (`W` 1 or 2; `M = 2^(8 / W)`).
const fn compress_table<const M: usize, const W: usize>() -> [[i32; 8]; M] {
    let mut t = [[0i32; 8]; M];
    let mut m = 0;
    while m < M {
        let mut j = 0;
        let mut pass = 0;
        while pass < 2 {
            let mut l = 0;
            while l < 8 / W {
                if (m & (1 << l) != 0) == (pass == 0) {
                    let mut w = 0;
                    while w < W {
                        t[m][W * j + w] = (W * l + w) as i32;
                        w += 1;
                    }
                    j += 1;
                }
                l += 1;
            }
            pass += 1;
        }
        m += 1;
    }
    t
}

/// [`compress_table`] of 32-bit lanes (8-bit masks).
const COMPRESS_32: [[i32; 8]; 256] = compress_table::<256, 1>();

/// [`compress_table`] of 64-bit lanes (4-bit masks).
const COMPRESS_64: [[i32; 8]; 16] = compress_table::<16, 2>();

/// `unsafe fn`s compiled for AVX2 and inlined, one a `fn name(args) -> ret { body }`: the
/// register operations of a [`Lane`] impl. `delegate T:` and signatures instead: each calls
/// `T`'s operation of the same name (a type of the same lane width).
macro_rules! avx2_fns {
    (delegate $to:ty: $(fn $name:ident($($arg:ident: $ty:ty),*) -> $ret:ty;)*) => {
        avx2_fns! {
            $(fn $name($($arg: $ty),*) -> $ret {
                // SAFETY: AVX2 is enabled here.
                unsafe { <$to as Lane>::$name($($arg),*) }
            })*
        }
    };
    ($(fn $name:ident($($arg:ident: $ty:ty),*) -> $ret:ty $body:block)*) => {
        $(
            #[inline]
            #[target_feature(enable = "avx2,popcnt")]
            unsafe fn $name($($arg: $ty),*) -> $ret $body
        )*
    };
}

/// `impl Lane` for the integer keys of one lane width: in the braces the width's lanes, its
/// signed integer, instructions and compress table, the lane bits of `lane_mask`, the
/// `reverse` indices, then the bodies of `xor_lanes` and `lane0`; then a row per type: the
/// bias that makes its order a signed compare, its lane-wise min and max.
macro_rules! lane_int {
    ({$lanes:literal, $int:ty, $set1:ident, $cmpgt:ident, $cmpeq:ident, $maskload:ident,
      $movemask:ident($cast:ident), $table:ident, bits $bits:expr, reverse $rev:expr,
      xor |$xv:ident, $xd:ident| $xor:expr, lane0 |$v0:ident| $lane0:expr}
     $(($t:ty, $bias:expr, $min:expr, $max:expr)),+) => {$(
        impl Lane for $t {
            const LANES: usize = $lanes;
            const MAX: Self = <$t>::MAX;
            #[inline(always)]
            fn succ(self) -> Option<Self> {
                self.checked_add(1)
            }
            avx2_fns! {
                fn splat(x: Self) -> __m256i {
                    $set1(x as $int)
                }
                fn vgt(a: __m256i, b: __m256i) -> __m256i {
                    let s = $set1($bias);
                    $cmpgt(_mm256_xor_si256(a, s), _mm256_xor_si256(b, s))
                }
                fn vmin(a: __m256i, b: __m256i) -> __m256i {
                    $min(a, b)
                }
                fn vmax(a: __m256i, b: __m256i) -> __m256i {
                    $max(a, b)
                }
                fn movemask(m: __m256i) -> u32 {
                    $movemask($cast(m)) as u32
                }
                fn lane_mask(bits: u32) -> __m256i {
                    let bit = $bits;
                    $cmpeq(_mm256_and_si256($set1(bits as $int), bit), bit)
                }
                fn compress(m: u32, v: __m256i) -> __m256i {
                    // SAFETY: m < 2^LANES; the row is 8 readable i32.
                    let idx = unsafe { _mm256_loadu_si256($table[m as usize].as_ptr().cast()) };
                    _mm256_permutevar8x32_epi32(v, idx)
                }
                fn mask_load(p: *const Self, mask: __m256i) -> __m256i {
                    // SAFETY: the caller guarantees the lanes of `mask` readable at `p`.
                    unsafe { $maskload(p.cast(), mask) }
                }
                fn xor_lanes($xv: __m256i, $xd: usize) -> __m256i {
                    $xor
                }
                fn reverse(v: __m256i) -> __m256i {
                    _mm256_permutevar8x32_epi32(v, $rev)
                }
                fn lane0($v0: __m256i) -> Self {
                    $lane0 as $t
                }
            }
        }
    )+};
}

/// The lanes of `a` and `b` that [`Lane::vgt`] finds smaller (AVX2 has no 64-bit min).
#[inline]
#[target_feature(enable = "avx2,popcnt")]
fn min_by_vgt<T: Lane>(a: __m256i, b: __m256i) -> __m256i {
    // SAFETY: AVX2 is enabled here.
    _mm256_blendv_epi8(a, b, unsafe { T::vgt(a, b) })
}

/// The lanes of `a` and `b` that [`Lane::vgt`] finds larger (AVX2 has no 64-bit max).
#[inline]
#[target_feature(enable = "avx2,popcnt")]
fn max_by_vgt<T: Lane>(a: __m256i, b: __m256i) -> __m256i {
    // SAFETY: AVX2 is enabled here.
    _mm256_blendv_epi8(b, a, unsafe { T::vgt(a, b) })
}

lane_int! {
    {8, i32, _mm256_set1_epi32, _mm256_cmpgt_epi32, _mm256_cmpeq_epi32, _mm256_maskload_epi32,
     _mm256_movemask_ps(_mm256_castsi256_ps), COMPRESS_32,
     bits _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128),
     reverse _mm256_setr_epi32(7, 6, 5, 4, 3, 2, 1, 0),
     xor |v, d| match d {
         1 => _mm256_shuffle_epi32::<0b10_11_00_01>(v),
         2 => _mm256_shuffle_epi32::<0b01_00_11_10>(v),
         _ => _mm256_permute2x128_si256::<1>(v, v),
     },
     lane0 |v| _mm256_cvtsi256_si32(v)}
    (u32, i32::MIN, _mm256_min_epu32, _mm256_max_epu32),
    (i32, 0, _mm256_min_epi32, _mm256_max_epi32)
}

lane_int! {
    {4, i64, _mm256_set1_epi64x, _mm256_cmpgt_epi64, _mm256_cmpeq_epi64, _mm256_maskload_epi64,
     _mm256_movemask_pd(_mm256_castsi256_pd), COMPRESS_64,
     bits _mm256_setr_epi64x(1, 2, 4, 8),
     reverse _mm256_setr_epi32(6, 7, 4, 5, 2, 3, 0, 1),
     xor |v, d| match d {
         1 => _mm256_shuffle_epi32::<0b01_00_11_10>(v),
         _ => _mm256_permute2x128_si256::<1>(v, v),
     },
     lane0 |v| _mm_cvtsi128_si64(_mm256_castsi256_si128(v))}
    (u64, i64::MIN, min_by_vgt::<u64>, max_by_vgt::<u64>),
    (i64, 0, min_by_vgt::<i64>, max_by_vgt::<i64>)
}

/// A float key compared as a float, for the AVX2 float sort: `vcmpps/pd`, `vminps/pd` and
/// `vmaxps/pd` are cheaper than the 64-bit integer compare and blends of ordered bits. The
/// sort never sees a NaN (they are moved out first), so the float order is total, except that
/// `-0.0` and `+0.0` are equal: a compare-exchange of the two may turn both into the same
/// zero, and the caller rewrites the run of zeros afterwards from a count of `-0.0`.
#[derive(Clone, Copy, PartialEq, Debug)]
#[repr(transparent)]
pub(super) struct Float<F>(pub(super) F);

impl<F: PartialEq> Eq for Float<F> {}

// The comparisons and `min`/`max` are the float ones, written out: the defaults go through
// `cmp`'s `Ordering`, which compiles to branches; these compile to compares and selects, so
// the pivot's medians of three do not branch on the data.
impl<F: PartialOrd + Copy> PartialOrd for Float<F> {
    #[inline(always)]
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
    #[inline(always)]
    fn lt(&self, other: &Self) -> bool {
        self.0 < other.0
    }
    #[inline(always)]
    fn le(&self, other: &Self) -> bool {
        self.0 <= other.0
    }
    #[inline(always)]
    fn gt(&self, other: &Self) -> bool {
        self.0 > other.0
    }
    #[inline(always)]
    fn ge(&self, other: &Self) -> bool {
        self.0 >= other.0
    }
}

impl<F: PartialOrd + Copy> Ord for Float<F> {
    #[inline(always)]
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        // never NaN (see the type's doc)
        self.0
            .partial_cmp(&other.0)
            .unwrap_or(std::cmp::Ordering::Equal)
    }
    #[inline(always)]
    fn max(self, other: Self) -> Self {
        // `Ord::max`'s contract: `other` when the two are equal
        if other.0 < self.0 { self } else { other }
    }
    #[inline(always)]
    fn min(self, other: Self) -> Self {
        // `Ord::min`'s contract: `self` when the two are equal
        if other.0 < self.0 { other } else { self }
    }
}

/// `impl Lane for Float<$f>` on the lanes of `$bits`, whose integer impl gives the width's
/// operations (movemask, lane masks, compress, lane shuffles); the order is the float one, by
/// the float instructions given (`$cast_in` and `$cast_out` between the integer and float
/// views of a register).
macro_rules! lane_float {
    ($f:ty: $bits:ty, $set1:ident, $cmp:ident, $min:ident, $max:ident, $maskload:ident,
     $cast_in:ident, $cast_out:ident) => {
        impl Lane for Float<$f> {
            const LANES: usize = <$bits as Lane>::LANES;
            const MAX: Self = Float(<$f>::INFINITY);
            #[inline(always)]
            fn succ(self) -> Option<Self> {
                (self.0 < <$f>::INFINITY).then(|| Float(self.0.next_up()))
            }
            avx2_fns! {
                fn splat(x: Self) -> __m256i {
                    $cast_out($set1(x.0))
                }
                fn vgt(a: __m256i, b: __m256i) -> __m256i {
                    $cast_out($cmp::<_CMP_GT_OQ>($cast_in(a), $cast_in(b)))
                }
                fn vmin(a: __m256i, b: __m256i) -> __m256i {
                    $cast_out($min($cast_in(a), $cast_in(b)))
                }
                fn vmax(a: __m256i, b: __m256i) -> __m256i {
                    $cast_out($max($cast_in(a), $cast_in(b)))
                }
                fn mask_load(p: *const Self, mask: __m256i) -> __m256i {
                    // SAFETY: the caller guarantees the lanes of `mask` readable at `p`.
                    unsafe { $cast_out($maskload(p.cast(), mask)) }
                }
                fn lane0(v: __m256i) -> Self {
                    Float(<$f>::from_bits(_mm256_extract_epi64::<0>(v) as $bits))
                }
            }
            avx2_fns! {
                delegate $bits:
                fn movemask(m: __m256i) -> u32;
                fn lane_mask(bits: u32) -> __m256i;
                fn compress(m: u32, v: __m256i) -> __m256i;
                fn xor_lanes(v: __m256i, d: usize) -> __m256i;
                fn reverse(v: __m256i) -> __m256i;
            }
        }
    };
}

/// Copies the `n` keys at `src` to `dst` without their NaNs (appended to `nans`, in order):
/// the other keys to the front of `dst`, in order; returns how many those are and how many of
/// them are `-0.0`. A register at a time: one without NaN is stored whole at the write
/// position (which never passes the read position, so `src` may be `dst`), one with a NaN key
/// by key.
///
/// # Safety
/// AVX2 (and POPCNT); `n` readable keys at `src` and `n` writable slots at `dst`, either the
/// same or not overlapping.
#[target_feature(enable = "avx2,popcnt")]
pub(super) unsafe fn nans_out_f64(
    src: *const f64,
    dst: *mut f64,
    n: usize,
    nans: &mut Vec<f64>,
) -> (usize, usize) {
    let neg = _mm256_set1_epi64x((-0.0f64).to_bits() as i64);
    let (mut m, mut neg_zeros, mut i) = (0, 0, 0);
    let mut one = |k: f64, m: &mut usize, neg_zeros: &mut usize| {
        if k.is_nan() {
            nans.push(k);
        } else {
            // SAFETY: `*m` is at most the index of `k`, below `n`.
            unsafe { *dst.add(*m) = k };
            *m += 1;
            *neg_zeros += usize::from(k.to_bits() == (-0.0f64).to_bits());
        }
    };
    // SAFETY: loads cover `i..i + 4 <= n`; a store covers `m..m + 4` with `m <= i`, keys
    // loaded already.
    unsafe {
        while i + 4 <= n {
            let x = _mm256_loadu_pd(src.add(i));
            let nan = _mm256_movemask_pd(_mm256_cmp_pd::<_CMP_UNORD_Q>(x, x));
            if nan == 0 {
                let z = _mm256_cmpeq_epi64(_mm256_castpd_si256(x), neg);
                neg_zeros +=
                    (_mm256_movemask_pd(_mm256_castsi256_pd(z)) as u32).count_ones() as usize;
                _mm256_storeu_pd(dst.add(m), x);
                m += 4;
            } else {
                for j in 0..4 {
                    one(*src.add(i + j), &mut m, &mut neg_zeros);
                }
            }
            i += 4;
        }
        for j in i..n {
            one(*src.add(j), &mut m, &mut neg_zeros);
        }
    }
    (m, neg_zeros)
}

lane_float! {
    f64: u64, _mm256_set1_pd, _mm256_cmp_pd, _mm256_min_pd, _mm256_max_pd, _mm256_maskload_pd,
    _mm256_castsi256_pd, _mm256_castpd_si256
}
lane_float! {
    f32: u32, _mm256_set1_ps, _mm256_cmp_ps, _mm256_min_ps, _mm256_max_ps, _mm256_maskload_ps,
    _mm256_castsi256_ps, _mm256_castps_si256
}

/// The first `n` lanes from `p` (`n <= LANES`), the rest `MAX`.
#[inline(always)]
unsafe fn load_first<T: Lane>(p: *const T, n: usize) -> __m256i {
    // SAFETY: the caller has AVX2 (see the note on `exchange`) and `n` readable lanes at `p`.
    unsafe {
        if n == T::LANES {
            return load(p);
        }
        let mask = T::lane_mask(first(n));
        _mm256_blendv_epi8(T::splat(T::MAX), T::mask_load(p, mask), mask)
    }
}

/// Stores the first `n` lanes of `v` at `p` (through a copy on the stack: `vpmaskmov` stores
/// are microcoded on AMD cores, tens of cycles each).
#[inline(always)]
unsafe fn store_first<T: Lane>(p: *mut T, n: usize, v: __m256i) {
    let mut a = [T::MAX; 8];
    // SAFETY: the caller has AVX2 (see the note on `exchange`) and `n` writable lanes at `p`;
    // `a` holds 32 bytes.
    unsafe {
        if n == T::LANES {
            _mm256_storeu_si256(p.cast(), v);
            return;
        }
        _mm256_storeu_si256(a.as_mut_ptr().cast(), v);
        copy_small(a.as_ptr().cast(), p.cast(), n * size_of::<T>());
    }
}

/// Copies `bytes` (a multiple of 4 below 32) from `src` to `dst` by at most three fixed-size
/// moves (16, 8 and 4 bytes), without a call to `memcpy`.
///
/// # Safety
/// `bytes` readable at `src`, writable at `dst`, not overlapping.
#[inline(always)]
unsafe fn copy_small(src: *const u8, dst: *mut u8, bytes: usize) {
    debug_assert!(bytes < 32 && bytes.is_multiple_of(4));
    let mut at = 0;
    // SAFETY: each move lies inside the first `bytes` bytes of both (the caller's ranges).
    unsafe {
        if bytes & 16 != 0 {
            std::ptr::write_unaligned(dst.cast::<u128>(), std::ptr::read_unaligned(src.cast()));
            at = 16;
        }
        if bytes & 8 != 0 {
            let v = std::ptr::read_unaligned(src.add(at).cast::<u64>());
            std::ptr::write_unaligned(dst.add(at).cast::<u64>(), v);
            at += 8;
        }
        if bytes & 4 != 0 {
            let v = std::ptr::read_unaligned(src.add(at).cast::<u32>());
            std::ptr::write_unaligned(dst.add(at).cast::<u32>(), v);
        }
    }
}

/// Stores the last `n` of the `LANES` lanes of `v` at `p`.
#[inline(always)]
unsafe fn store_last<T: Lane>(p: *mut T, n: usize, v: __m256i) {
    let mut a = [T::MAX; 8];
    // SAFETY: as in `store_first`.
    unsafe {
        _mm256_storeu_si256(a.as_mut_ptr().cast(), v);
        if n == T::LANES {
            _mm256_storeu_si256(p.cast(), v);
        } else {
            copy_small(
                a.as_ptr().add(T::LANES - n).cast(),
                p.cast(),
                n * size_of::<T>(),
            );
        }
    }
}

#[inline(always)]
unsafe fn load<T: Lane>(p: *const T) -> __m256i {
    // SAFETY: the caller has AVX2 and a whole register readable at `p`.
    unsafe { _mm256_loadu_si256(p.cast()) }
}

/// The largest lane.
#[inline(always)]
unsafe fn reduce_max<T: Lane>(v: __m256i) -> T {
    let mut a = [T::MAX; 8];
    // SAFETY: the caller has AVX2; `a` holds 32 bytes.
    unsafe { _mm256_storeu_si256(a.as_mut_ptr().cast(), v) };
    a[..T::LANES].iter().copied().max().unwrap_or(T::MAX)
}

/// The lane-wise minimum of `v` and its partner register `p`, the maximum in the lanes of
/// `take_max`: one compare-exchange step of the networks.
///
/// This and the other helpers without `#[target_feature]` are always inlined into functions
/// that enable AVX2, and may only be called from such functions.
#[inline(always)]
unsafe fn exchange<T: Lane>(v: __m256i, p: __m256i, take_max: u32) -> __m256i {
    // SAFETY: the caller has AVX2 (see above).
    unsafe { _mm256_blendv_epi8(T::vmin(v, p), T::vmax(v, p), T::lane_mask(take_max)) }
}

network_helpers!(__m256i);

/// The lanes of `v` reversed inside each block of `s` lanes (`s` a power of two from 2 up to
/// `LANES`).
#[inline(always)]
unsafe fn reverse_blocks<T: Lane>(v: __m256i, s: usize) -> __m256i {
    // SAFETY: the caller has AVX2 (see the note on `exchange`).
    unsafe {
        if s == T::LANES {
            T::reverse(v)
        } else if s == 2 {
            T::xor_lanes(v, 1)
        } else {
            debug_assert!(T::LANES == 8 && s == 4);
            _mm256_shuffle_epi32::<0b00_01_10_11>(v)
        }
    }
}

/// Sorts the `n` keys at `src` (at most `K * LANES`) with the network into `dst` (which may
/// be `src`).
///
/// # Safety
/// AVX2; `n` readable keys at `src`, `n` writable slots at `dst`.
#[inline]
#[target_feature(enable = "avx2,popcnt")]
unsafe fn sort_regs<T: Lane, const K: usize>(src: *const T, dst: *mut T, n: usize) {
    let l = T::LANES;
    // SAFETY: AVX2 is enabled; every load and store covers only lanes inside the `n` keys.
    unsafe {
        let mut r = [T::splat(T::MAX); K];
        for (a, ra) in r.iter_mut().enumerate() {
            if a * l < n {
                *ra = load_first(src.add(a * l), (n - a * l).min(l));
            }
        }
        network::<T, K>(&mut r);
        for (a, ra) in r.iter().enumerate() {
            if a * l < n {
                store_first(dst.add(a * l), (n - a * l).min(l), *ra);
            }
        }
    }
}

/// The largest range the network sorts: 64 keys (8 registers of 32-bit keys, 16 of 64-bit
/// keys).
pub(super) fn small_max<T: Lane>() -> usize {
    64
}

/// Sorts at most [`small_max`] keys with the smallest network that holds them (the tests'
/// door to the networks).
#[cfg(test)]
#[target_feature(enable = "avx2,popcnt")]
pub(super) unsafe fn sort_small<T: Lane>(v: &mut [T]) {
    // SAFETY: AVX2 is enabled here; `v` is the source and the destination.
    unsafe { sort_small_into(v.as_ptr(), v.as_mut_ptr(), v.len()) }
}

/// [`sort_small`] of the `n` keys at `src` into `dst` (which may be `src`).
///
/// # Safety
/// AVX2; `n <= small_max`, `n` readable keys at `src`, `n` writable slots at `dst`.
#[inline(never)]
#[target_feature(enable = "avx2,popcnt")]
unsafe fn sort_small_into<T: Lane>(src: *const T, dst: *mut T, n: usize) {
    let l = T::LANES;
    // SAFETY: AVX2 is enabled here; each network holds `n` keys.
    unsafe {
        if n <= l {
            sort_regs::<T, 1>(src, dst, n)
        } else if n <= 2 * l {
            sort_regs::<T, 2>(src, dst, n)
        } else if n <= 4 * l {
            sort_regs::<T, 4>(src, dst, n)
        } else if n <= 8 * l {
            sort_regs::<T, 8>(src, dst, n)
        } else {
            sort_regs::<T, 16>(src, dst, n)
        }
    }
}

/// The lanes of `v` in the mask `lanes` (`!0`: all) below the pivot `pv`: how many, and `v`
/// with those keys first.
#[inline(always)]
unsafe fn split_reg<T: Lane>(v: __m256i, pv: __m256i, lanes: u32) -> (usize, __m256i) {
    // SAFETY: the caller has AVX2 (see the note on `exchange`).
    unsafe {
        let m = T::movemask(T::vgt(pv, v)) & lanes;
        (m.count_ones() as usize, T::compress(m, v))
    }
}

/// Stores the `g` lanes of `w` from lane `c` on at `p` (through a copy on the stack).
#[inline(always)]
unsafe fn store_from<T: Lane>(p: *mut T, w: __m256i, c: usize, g: usize) {
    let mut a = [T::MAX; 8];
    // SAFETY: the caller has AVX2 (see the note on `exchange`) and `g` writable slots at `p`;
    // `a` holds 32 bytes, `c + g <= LANES`.
    unsafe {
        _mm256_storeu_si256(a.as_mut_ptr().cast(), w);
        copy_small(a.as_ptr().add(c).cast(), p.cast(), g * size_of::<T>());
    }
}

/// The lane-wise maximum of `pv` and the first `r` lanes of `head` (the others do not count).
#[inline(always)]
unsafe fn head_max<T: Lane>(pv: __m256i, head: __m256i, r: usize) -> __m256i {
    // SAFETY: the caller has AVX2 (see the note on `exchange`).
    unsafe { T::vmax(pv, _mm256_blendv_epi8(pv, head, T::lane_mask(first(r)))) }
}

/// Partitions one register's keys: those below the pivot to `p[*lo..]`, the others just
/// below `*hi`, each side by exact-length copies (safe with no free slots beyond them).
#[inline(always)]
unsafe fn put<T: Lane>(p: *mut T, v: __m256i, pv: __m256i, lo: &mut usize, hi: &mut usize) {
    // SAFETY: the caller guarantees AVX2 and room for the keys written at both ends.
    unsafe {
        let (c, w) = split_reg::<T>(v, pv, !0);
        store_first(p.add(*lo), c, w);
        *lo += c;
        let g = T::LANES - c;
        *hi -= g;
        store_last(p.add(*hi), g, w);
    }
}

/// [`put`] by two whole-register stores of one permuted register (keys below the pivot
/// first, the others last): the caller guarantees at least `LANES` free slots at each end.
#[inline(always)]
unsafe fn put_wide<T: Lane>(p: *mut T, v: __m256i, pv: __m256i, lo: &mut usize, hi: &mut usize) {
    // SAFETY: the caller guarantees AVX2 and a register of free slots at `*lo` and below `*hi`.
    unsafe {
        let (c, w) = split_reg::<T>(v, pv, !0);
        _mm256_storeu_si256(p.add(*lo).cast(), w);
        *lo += c;
        _mm256_storeu_si256(p.add(*hi - T::LANES).cast(), w);
        *hi -= T::LANES - c;
    }
}

/// Registers read per step of the partition's main loop.
const UNROLL: usize = 8;
/// Registers held at each end: one more than a step reads (see [`partition`]).
const HELD: usize = UNROLL + 1;

/// Partitions `v` (at least `2 * LANES` keys): `(m, max)` with `v[..m]` below `pivot`,
/// `v[m..]` at least `pivot`, and `max` the largest key (or `pivot` when larger).
///
/// In place, as the AVX-512 partition: `HELD` registers held at each end leave `2 * HELD *
/// LANES` free slots; each step reads `UNROLL` registers from the end with fewer free slots,
/// which keeps at least a register of free slots at both ends before every write, so each
/// register goes out by [`put_wide`]'s two whole-register stores (AVX2 has no compress and
/// its masked stores are slow on AMD cores). The held registers go last, by whole-register
/// stores while two registers of slots are left between the write positions, then exactly.
/// Ranges of fewer than `2 * HELD` registers are partitioned out of place through the stack.
#[inline(never)]
#[target_feature(enable = "avx2,popcnt")]
pub(super) unsafe fn partition<T: Lane>(v: &mut [T], pivot: T) -> (usize, T) {
    let l = T::LANES;
    let n = v.len();
    debug_assert!(n >= 2 * l);
    let p = v.as_mut_ptr();
    if n < 2 * HELD * l {
        let mut copy = [T::MAX; 2 * HELD * 8];
        // SAFETY: `copy` holds n < 2 HELD LANES keys (LANES <= 8); AVX2 is enabled; the
        // copy and `v` are disjoint.
        unsafe {
            std::ptr::copy_nonoverlapping(p, copy.as_mut_ptr(), n);
            return partition_into(copy.as_ptr(), n, p, pivot);
        }
    }
    // SAFETY: AVX2 is enabled; loads read unread whole registers inside the range and the
    // stores have room for every key they write (see the doc comment).
    unsafe {
        let pv = T::splat(pivot);
        // The first `n % LANES` keys as one partial register (see the AVX-512 partition).
        let r = n % l;
        let head = load_first(p, r);
        let (c, w) = split_reg::<T>(head, pv, first(r)); // the c keys below, then the others
        let g = r - c;
        let tail = load_first(p.add(n - g), g);
        store_first(p, c, w);
        store_first(p.add(c), g, tail);
        store_from(p.add(n - g), w, c, g);
        let (left, right) = (c, n - g);
        let mut top = head_max::<T>(pv, head, r);
        let mut ends = [pv; 2 * HELD];
        for i in 0..HELD {
            ends[i] = load(p.add(left + i * l));
            ends[HELD + i] = load(p.add(right - (i + 1) * l));
        }
        for e in &ends {
            top = T::vmax(top, *e);
        }
        let (mut rl, mut rr) = (left + HELD * l, right - HELD * l); // unread
        let (mut sl, mut sr) = (left, right); // written: [left, sl) and [sr, right)
        while rr - rl >= UNROLL * l {
            let mut x = [pv; UNROLL];
            if sr - rr < rl - sl {
                rr -= UNROLL * l;
                for (i, xi) in x.iter_mut().enumerate() {
                    *xi = load(p.add(rr + i * l));
                    // the block eight steps on, on this side (a prefetch never faults)
                    let next = p.wrapping_add(rr + i * l).wrapping_sub(8 * UNROLL * l);
                    _mm_prefetch::<_MM_HINT_T0>(next.cast());
                }
            } else {
                for (i, xi) in x.iter_mut().enumerate() {
                    *xi = load(p.add(rl + i * l));
                    let next = p.wrapping_add(rl + i * l + 8 * UNROLL * l);
                    _mm_prefetch::<_MM_HINT_T0>(next.cast());
                }
                rl += UNROLL * l;
            }
            // the step's maximum as a tree, then one max on the running maximum
            let a = T::vmax(T::vmax(x[0], x[1]), T::vmax(x[2], x[3]));
            let b = T::vmax(T::vmax(x[4], x[5]), T::vmax(x[6], x[7]));
            top = T::vmax(top, T::vmax(a, b));
            for xi in x {
                put_wide::<T>(p, xi, pv, &mut sl, &mut sr);
            }
        }
        while rl < rr {
            let x = if sr - rr < rl - sl {
                rr -= l;
                load(p.add(rr))
            } else {
                rl += l;
                load(p.add(rl - l))
            };
            top = T::vmax(top, x);
            put_wide::<T>(p, x, pv, &mut sl, &mut sr);
        }
        for e in ends {
            if sr - sl >= 2 * l {
                put_wide::<T>(p, e, pv, &mut sl, &mut sr);
            } else {
                put::<T>(p, e, pv, &mut sl, &mut sr);
            }
        }
        debug_assert_eq!(sl, sr);
        (sl, reduce_max(top))
    }
}

/// Partitions the `n` keys at `src` (at least `LANES`) into `dst` (another buffer): `(m,
/// max)` as [`partition`]. Out of place: every register but the last goes out by two
/// whole-register stores (while two registers are left to read, the unwritten slots between
/// the write positions number at least two registers), the last and the first `n % LANES`
/// keys exactly.
///
/// # Safety
/// AVX2; `n` readable keys at `src`, `n` writable slots at `dst`, the two disjoint.
#[inline(never)]
#[target_feature(enable = "avx2,popcnt")]
unsafe fn partition_into<T: Lane>(src: *const T, n: usize, dst: *mut T, pivot: T) -> (usize, T) {
    let l = T::LANES;
    debug_assert!(n >= l);
    // SAFETY: AVX2 is enabled; loads cover whole registers of the `n` keys; the stores stay
    // between the write positions (see the doc comment).
    unsafe {
        let pv = T::splat(pivot);
        let r = n % l;
        let head = load_first(src, r);
        let (c, w) = split_reg::<T>(head, pv, first(r));
        store_first(dst, c, w);
        store_from(dst.add(n - (r - c)), w, c, r - c);
        let mut top = head_max::<T>(pv, head, r);
        let (mut lo, mut hi) = (c, n - (r - c));
        let mut i = r;
        // two maxima in turn: one running maximum would be a chain of dependent max
        // instructions as long as the loop (blends of compares for 64-bit integers)
        let mut top2 = top;
        while i + 3 * l <= n {
            let (x, y) = (load(src.add(i)), load(src.add(i + l)));
            top = T::vmax(top, x);
            top2 = T::vmax(top2, y);
            put_wide::<T>(dst, x, pv, &mut lo, &mut hi);
            put_wide::<T>(dst, y, pv, &mut lo, &mut hi);
            i += 2 * l;
        }
        top = T::vmax(top, top2);
        while i + 2 * l <= n {
            let x = load(src.add(i));
            top = T::vmax(top, x);
            put_wide::<T>(dst, x, pv, &mut lo, &mut hi);
            i += l;
        }
        if i < n {
            let x = load(src.add(i));
            top = T::vmax(top, x);
            put::<T>(dst, x, pv, &mut lo, &mut hi);
        }
        debug_assert_eq!(lo, hi);
        (lo, reduce_max(top))
    }
}

/// Ranges of at most this many keys are sorted out of place (see the AVX-512 path's
/// `sort_small_oop`).
const SMALL_OOP: usize = 2048;

/// Sorts the `n <= SMALL_OOP` keys at `src` into `dst` (which may be `src`) out of place,
/// through a buffer on the stack; `depth` partitions left before `sort_unstable`.
///
/// # Safety
/// AVX2; `n` readable keys at `src`, `n` writable slots at `dst`, `src` either `dst` or not
/// overlapping it.
#[target_feature(enable = "avx2,popcnt")]
unsafe fn sort_small_oop<T: Lane>(src: *const T, dst: *mut T, n: usize, depth: u32) {
    debug_assert!(n <= SMALL_OOP);
    if n <= small_max::<T>() {
        // SAFETY: AVX2 is enabled; a network holds `n` keys.
        unsafe { sort_small_into(src, dst, n) };
        return;
    }
    let mut scratch = [const { std::mem::MaybeUninit::<T>::uninit() }; SMALL_OOP];
    // SAFETY: AVX2 is enabled; the scratch buffer holds n slots and overlaps neither.
    unsafe { oop::<T>(src, scratch.as_mut_ptr().cast(), dst, dst, n, depth) }
}

small_oop_level!(
    "avx2,popcnt",
    <T: Lane>,
    copy std::ptr::copy,
    past_depth sort_past_depth
);

/// The keys at `src` sorted into `dst` by `slice::sort_unstable` (the depth limit of
/// [`oop`]).
///
/// # Safety
/// `n` readable keys at `src`, `n` writable slots at `dst`, equal or disjoint.
#[inline(always)]
unsafe fn sort_past_depth<T: Lane>(src: *const T, dst: *mut T, n: usize) {
    // SAFETY: the caller's ranges.
    unsafe {
        std::ptr::copy(src, dst, n);
        std::slice::from_raw_parts_mut(dst, n).sort_unstable();
    }
}

/// A pivot: the median of two registers of keys at a quarter and three quarters of `v`.
#[target_feature(enable = "avx2,popcnt")]
unsafe fn pivot<T: Lane>(v: &[T]) -> T {
    let n = v.len();
    let l = T::LANES;
    debug_assert!(n >= 4 * l);
    // SAFETY: AVX2 is enabled; both registers lie inside `v` (n >= 4 LANES).
    unsafe {
        let at = |num: usize| load(v.as_ptr().add(num * n / 4 - l / 2));
        let mut r = [at(1), at(3)];
        network::<T, 2>(&mut r);
        T::lane0(r[1])
    }
}

/// Below this many keys the two sides of a partition are sorted on the calling thread.
const PARALLEL_SPLIT: usize = 1 << 14;

/// Quicksort of `v`; `depth` partitions left before `sort_unstable` takes over.
#[target_feature(enable = "avx2,popcnt")]
pub(super) unsafe fn quicksort<T: Lane>(v: &mut [T], depth: u32, parallel: bool) {
    let n = v.len();
    if n <= SMALL_OOP {
        // SAFETY: AVX2 is enabled here; `v` is the source and the destination.
        unsafe { sort_small_oop(v.as_ptr(), v.as_mut_ptr(), n, depth) };
        return;
    }
    if depth == 0 {
        v.sort_unstable();
        return;
    }
    // SAFETY: AVX2 is enabled here (this function's contract).
    unsafe {
        let p = pivot(v);
        let (mut m, max) = partition(v, p);
        if m == 0 {
            // the pivot is the minimum: split off the keys equal to it
            let Some(p1) = p.succ() else { return };
            if max == p {
                return; // all equal
            }
            m = partition(v, p1).0;
            quicksort(&mut v[m..], depth - 1, parallel);
            return;
        }
        let (lo, hi) = v.split_at_mut(m);
        let hi_done = max == p; // every key of `hi` equals the pivot
        if parallel && n >= PARALLEL_SPLIT {
            rayon::join(
                // SAFETY: the closures run on threads of this process, where AVX2 was
                // detected before the first call.
                || quicksort(lo, depth - 1, true),
                || {
                    if !hi_done {
                        quicksort(hi, depth - 1, true)
                    }
                },
            );
        } else {
            quicksort(lo, depth - 1, false);
            if !hi_done {
                quicksort(hi, depth - 1, false);
            }
        }
    }
}

/// Groups the sorted ordered bits of `f32` keys in place under numpy's equality (`-0.0` is
/// `+0.0`, all NaNs one value): the first key of every group, turned back into the float's
/// bits, is written to the front of `v`, in order; returns how many. A register at a time,
/// as the AVX-512 `group_heads`: classes against the classes shifted by one lane give the
/// heads, packed by the lane-mask table and stored whole at the write position (never past
/// the read position).
///
/// # Safety
/// AVX2 (and POPCNT).
#[target_feature(enable = "avx2,popcnt")]
pub(super) unsafe fn group_f32_bits(v: &mut [u32]) -> usize {
    use crate::key::{F32_NEG_NAN_BLOCK, F32_ORD_INF, F32_ORD_NEG_ZERO, F32_ORD_POS_ZERO};
    let class = |x: __m256i| {
        let c = _mm256_min_epu32(x, _mm256_set1_epi32((F32_ORD_INF + 1) as i32));
        let z = _mm256_cmpeq_epi32(c, _mm256_set1_epi32(F32_ORD_NEG_ZERO as i32));
        _mm256_blendv_epi8(c, _mm256_set1_epi32(F32_ORD_POS_ZERO as i32), z)
    };
    let decode = |x: __m256i| {
        // f32::from_ordered: t = bits + NEG_NAN_BLOCK; top bit set: t ^ 0x8000_0000, else !t
        let t = _mm256_add_epi32(x, _mm256_set1_epi32(F32_NEG_NAN_BLOCK as i32));
        let clear = _mm256_srai_epi32::<31>(t);
        let flip = _mm256_or_si256(
            _mm256_xor_si256(clear, _mm256_set1_epi32(-1)),
            _mm256_set1_epi32(i32::MIN),
        );
        _mm256_xor_si256(t, flip)
    };
    let up = _mm256_setr_epi32(7, 0, 1, 2, 3, 4, 5, 6);
    let mut prev = _mm256_setzero_si256();
    // SAFETY: AVX2 is enabled here.
    unsafe {
        pack_heads::<u32>(v, |x| {
            let cls = class(x);
            // the classes shifted up a lane, the previous register's last in lane 0
            let last = _mm256_permutevar8x32_epi32(prev, _mm256_set1_epi32(7));
            let shifted = _mm256_blend_epi32::<1>(_mm256_permutevar8x32_epi32(cls, up), last);
            prev = cls;
            let same = <u32 as Lane>::movemask(_mm256_cmpeq_epi32(cls, shifted));
            (same, decode(x))
        })
    }
}

/// Groups sorted `f64` keys (the float sort's output: NaNs last) in place under numpy's
/// equality: the first key of every group is written to the front of `v`, in order; returns
/// how many. As [`group_f32_bits`], with float compares (`-0.0 == +0.0`; two NaNs equal).
///
/// # Safety
/// AVX2 (and POPCNT).
#[target_feature(enable = "avx2,popcnt")]
pub(super) unsafe fn group_f64(v: &mut [f64]) -> usize {
    let mut prev = _mm256_setzero_pd();
    // SAFETY: AVX2 is enabled here; `cast` views the f64 keys as u64 (same size and
    // alignment, every bit pattern valid in both).
    unsafe {
        pack_heads::<u64>(super::cast(v), |xi| {
            let x = _mm256_castsi256_pd(xi);
            let last = _mm256_permute4x64_pd::<0b11_11_11_11>(prev);
            let shifted = _mm256_blend_pd::<1>(_mm256_permute4x64_pd::<0b10_01_00_11>(x), last);
            prev = x;
            let eq = _mm256_cmp_pd::<_CMP_EQ_OQ>(x, shifted);
            let nans = _mm256_and_pd(
                _mm256_cmp_pd::<_CMP_UNORD_Q>(x, x),
                _mm256_cmp_pd::<_CMP_UNORD_Q>(shifted, shifted),
            );
            (_mm256_movemask_pd(_mm256_or_pd(eq, nans)) as u32, xi)
        })
    }
}

/// The grouping loop of [`group_f32_bits`] and [`group_f64`], a register at a time:
/// `same(x)` gives the lanes of `x` equal to the key before them (lane 0 against the previous
/// register's last lane) and the keys to write; the first key of every group is written to
/// the front of `v`, in order (a whole store at the write position while it stays inside `v`,
/// which never passes the read position); returns how many.
#[inline(always)]
unsafe fn pack_heads<T: Lane>(
    v: &mut [T],
    mut same: impl FnMut(__m256i) -> (u32, __m256i),
) -> usize {
    let (n, l) = (v.len(), T::LANES);
    let p = v.as_mut_ptr();
    let (mut i, mut m) = (0, 0);
    // SAFETY: the caller has AVX2; loads cover `i..i + c`, `c <= n - i`; a whole store covers
    // `m..m + LANES` only inside `v`, else the `k` heads (`m + k <= i + c <= n`), and
    // `m <= i`: only keys loaded already are overwritten.
    unsafe {
        while i < n {
            let c = (n - i).min(l);
            let x = load_first::<T>(p.add(i), c);
            let (same, keys) = same(x);
            let mut heads = !same & first(c);
            if i == 0 {
                heads |= 1;
            }
            let w = T::compress(heads, keys);
            let k = heads.count_ones() as usize;
            if m + l <= n {
                _mm256_storeu_si256(p.add(m).cast(), w);
            } else {
                store_first::<T>(p.add(m), k, w);
            }
            m += k;
            i += l;
        }
    }
    m
}
