//! AVX-512 quicksort of `u32`, `u64` (unsigned keys and the ordered bits of floats), `i32`
//! and `i64` (signed keys as they are).
//!
//! Partition (in place): the first `n % LANES` keys are partitioned as one masked register, then
//! `HELD` registers are held from each end and the middle is read `UNROLL` registers at a time from
//! whichever end has fewer free slots (two code paths, so the choice is a predicted branch rather
//! than a conditional move the next loads would wait for). Each register's keys below the pivot are
//! compressed to its low lanes (`vpcompressd/q`, register form) and written by a whole-register
//! store at the left write position (the lanes past them land in free slots that later stores
//! overwrite: there is always a register of free slots there, so no mask is built), the others
//! compressed by a compare of their own and written with a masked store just below the right one
//! (mask `all >> c` by BMI2's `shrx`). Small ranges (at most 16 registers) are sorted by a network
//! held in registers and padded with the largest value (`network_helpers!` in `mod.rs`, shared
//! with the AVX2 path): each lane sorted down the registers (Batcher's odd–even merge network:
//! lane-wise min and max, no shuffles), then the sorted columns merged in lane blocks of 2 to
//! `LANES`, as x86-simd-sort lays its networks out.
//! Pivot: the median of two (four from 2^14 keys) registers of keys at evenly spaced places, sorted
//! by the same network. Ties: when the pivot is the minimum, a second partition at `pivot + 1`
//! splits off the run of keys equal to it; when it is the maximum (tracked during the partition)
//! the right side is all equal and is not recursed into. A depth limit of `2 log2 n` hands
//! pathological inputs to `slice::sort_unstable`. The measurements behind `UNROLL` and the network
//! size are in `docs/benchmarks-history.md` (gpu-primitives, CPU sort against numpy).
//!
//! Each key is finished by a [`Finish`] as it reaches its final place (the network's stores, or a
//! scalar pass over runs of equal keys): nothing for integers, the ordered bits turned back into
//! floats for `f32` and `f64`, which saves the caller a pass over the sorted keys.

use std::arch::x86_64::*;

use super::{first, upper};

/// A lane type with its AVX-512 register operations (all unsafe: they need AVX-512F).
pub(super) trait Lane: Copy + Ord + Send + Sync + 'static {
    /// Lanes per 512-bit register.
    const LANES: usize;
    /// The largest value (padding of partial registers).
    const MAX: Self;
    /// `self + 1`, `None` at `MAX`.
    fn succ(self) -> Option<Self>;
    unsafe fn splat(x: Self) -> __m512i;
    /// The first `n` lanes from `p` (`n <= LANES`), the rest `MAX`.
    unsafe fn load_first(p: *const Self, n: usize) -> __m512i;
    unsafe fn load(p: *const Self) -> __m512i;
    /// Stores the first `n` lanes of `v` at `p` (masked: nothing else is touched).
    unsafe fn store_first(p: *mut Self, n: usize, v: __m512i);
    /// Stores the lanes of `v` set in `m` at `p` (masked: nothing else is touched).
    unsafe fn store_mask(p: *mut Self, m: u32, v: __m512i);
    /// Bit `l` set where lane `l` of `a` is below lane `l` of `b` (in `Self`'s order).
    unsafe fn below(a: __m512i, b: __m512i) -> u32;
    /// The complement of [`Lane::below`], by a compare of its own (not a mask negation
    /// waiting on the first compare).
    unsafe fn at_least(a: __m512i, b: __m512i) -> u32;
    /// The lanes selected by `m`, packed into the low lanes (the rest zero).
    unsafe fn compress(m: u32, v: __m512i) -> __m512i;
    /// For 8 lanes: the lanes selected by `m` packed into the low lanes, the others into the
    /// high lanes, each in order (one permutation from a table); 16 lanes: unused.
    unsafe fn split(m: u32, v: __m512i) -> __m512i;
    unsafe fn vmin(a: __m512i, b: __m512i) -> __m512i;
    unsafe fn vmax(a: __m512i, b: __m512i) -> __m512i;
    /// `max(a, b)` in the lanes of `m`, `src` elsewhere.
    unsafe fn mask_max(src: __m512i, m: u32, a: __m512i, b: __m512i) -> __m512i;
    /// Lane `l` takes lane `l ^ d` (`d` a power of two below `LANES`).
    unsafe fn xor_lanes(v: __m512i, d: usize) -> __m512i;
    /// Lane 0.
    unsafe fn lane0(v: __m512i) -> Self;
    /// The lanes in reverse order.
    unsafe fn reverse(v: __m512i) -> __m512i;
    /// The largest lane.
    unsafe fn reduce_max(v: __m512i) -> Self;
    /// Bit `l` set where lane `l` of `a` differs from lane `l` of `b`.
    unsafe fn differs(a: __m512i, b: __m512i) -> u32;
    /// Lanes moved up by one: lane 0 takes the last lane of `prev`, lane `l` lane `l - 1`
    /// of `v`.
    unsafe fn shift_in(prev: __m512i, v: __m512i) -> __m512i;
}

/// For each mask `m` of 8 lanes, the lane indices (one byte each) of a permutation that puts
/// the lanes of `m` first and the others after them, each in lane order.
static SPLIT8: [u64; 256] = split_table();

const fn split_table() -> [u64; 256] {
    let mut t = [0u64; 256];
    let mut m = 0;
    while m < 256 {
        let mut word = 0u64;
        let mut k = 0;
        let mut lane = 0;
        while lane < 8 {
            if m & (1 << lane) != 0 {
                word |= (lane as u64) << (8 * k);
                k += 1;
            }
            lane += 1;
        }
        lane = 0;
        while lane < 8 {
            if m & (1 << lane) == 0 {
                word |= (lane as u64) << (8 * k);
                k += 1;
            }
            lane += 1;
        }
        t[m] = word;
        m += 1;
    }
    t
}

/// What happens to the keys as the quicksort stores them in their final place: nothing
/// ([`Keep`]), or the ordered bits of floats turned back into the floats' own bits
/// ([`DecodeF32`], [`DecodeF64`]), which saves the caller a pass over the sorted keys.
pub(super) trait Finish<T: Lane>: 'static {
    /// One register of sorted keys, finished.
    unsafe fn reg(v: __m512i) -> __m512i;
    /// One key, finished (for ranges done without the network: runs of equal keys and the
    /// depth-limit fallback).
    fn key(k: T) -> T;
}

/// Leaves the keys as they are.
pub(super) enum Keep {}

impl<T: Lane> Finish<T> for Keep {
    #[inline(always)]
    unsafe fn reg(v: __m512i) -> __m512i {
        v
    }
    #[inline(always)]
    fn key(k: T) -> T {
        k
    }
}

/// `f32::from_ordered` (crate::key): ordered bits back to the bits of the `f32`.
pub(super) enum DecodeF32 {}

/// `f64::from_ordered` (crate::key): ordered bits back to the bits of the `f64`.
pub(super) enum DecodeF64 {}

/// The ordered bits of signed integers (`i32::to_ordered`: the sign bit flipped) back to the
/// integers' bits.
pub(super) enum FlipSign {}

/// Which sorted keys `distinct` treats as one value, register by register: each key's class
/// (equal classes, one value).
pub(super) trait Classes<T: Lane>: 'static {
    /// The classes of a register of ordered bits.
    unsafe fn reg(v: __m512i) -> __m512i;
}

/// Equal bits are one value (integers, and floats compared bitwise).
pub(super) enum SameBits {}

impl<T: Lane> Classes<T> for SameBits {
    #[inline(always)]
    unsafe fn reg(v: __m512i) -> __m512i {
        v
    }
}

/// `f32::numeric_class` (crate::key): `-0.0` is `+0.0`, every NaN the first NaN.
pub(super) enum NumericF32 {}

/// `f64::numeric_class` (crate::key).
pub(super) enum NumericF64 {}

/// The impls of one key width for the floats' [`Finish`] and [`Classes`] (`$decode`,
/// `$numeric`) and for [`FlipSign`]: keys `$bits` holding `$float`s' ordered bits (the
/// `crate::key` constants in the first brackets), lanes handled as `$int` by that width's
/// intrinsics (add, set1, arithmetic right shift by `$top`, min, compare equal, masked move).
macro_rules! width_finishes {
    (
        $bits:ty, $float:ty, $int:ty, $top:literal, $decode:ident, $numeric:ident,
        [$neg_nan_block:ident, $ord_inf:ident, $ord_neg_zero:ident, $ord_pos_zero:ident],
        [$add:ident, $set1:ident, $srai:ident, $min:ident, $cmpeq:ident, $mov:ident]
    ) => {
        impl Finish<$bits> for $decode {
            #[inline]
            #[target_feature(enable = "avx512f,popcnt,bmi2")]
            unsafe fn reg(v: __m512i) -> __m512i {
                // t = bits + NEG_NAN_BLOCK; top bit set: t ^ SIGN, clear: !t
                let t = $add(v, $set1(crate::key::$neg_nan_block as $int));
                let clear = $srai::<$top>(t); // all ones where the top bit is set
                let flip =
                    _mm512_or_si512(_mm512_andnot_si512(clear, $set1(-1)), $set1(<$int>::MIN));
                _mm512_xor_si512(t, flip)
            }
            #[inline(always)]
            fn key(k: $bits) -> $bits {
                <$float as crate::key::SortKey>::from_ordered(k).to_bits()
            }
        }

        impl Finish<$bits> for FlipSign {
            #[inline]
            #[target_feature(enable = "avx512f,popcnt,bmi2")]
            unsafe fn reg(v: __m512i) -> __m512i {
                _mm512_xor_si512(v, $set1(<$int>::MIN))
            }
            #[inline(always)]
            fn key(k: $bits) -> $bits {
                k ^ <$int>::MIN as $bits
            }
        }

        impl Classes<$bits> for $numeric {
            #[inline]
            #[target_feature(enable = "avx512f,popcnt,bmi2")]
            unsafe fn reg(v: __m512i) -> __m512i {
                use crate::key::{$ord_inf, $ord_neg_zero, $ord_pos_zero};
                let c = $min(v, $set1(($ord_inf + 1) as $int));
                let z = $cmpeq(c, $set1($ord_neg_zero as $int));
                $mov(c, z, $set1($ord_pos_zero as $int))
            }
        }
    };
}

width_finishes!(
    u32,
    f32,
    i32,
    31,
    DecodeF32,
    NumericF32,
    [
        F32_NEG_NAN_BLOCK,
        F32_ORD_INF,
        F32_ORD_NEG_ZERO,
        F32_ORD_POS_ZERO
    ],
    [
        _mm512_add_epi32,
        _mm512_set1_epi32,
        _mm512_srai_epi32,
        _mm512_min_epu32,
        _mm512_cmpeq_epi32_mask,
        _mm512_mask_mov_epi32
    ]
);
width_finishes!(
    u64,
    f64,
    i64,
    63,
    DecodeF64,
    NumericF64,
    [
        F64_NEG_NAN_BLOCK,
        F64_ORD_INF,
        F64_ORD_NEG_ZERO,
        F64_ORD_POS_ZERO
    ],
    [
        _mm512_add_epi64,
        _mm512_set1_epi64,
        _mm512_srai_epi64,
        _mm512_min_epu64,
        _mm512_cmpeq_epi64_mask,
        _mm512_mask_mov_epi64
    ]
);

/// Groups sorted ordered bits in place: the first key of every run of equal classes (`C`),
/// finished by `F`, is written to the front of `v`, in order; returns how many.
///
/// A register at a time: its classes against the same register shifted by one lane (the
/// previous register's last class shifted in) give the heads, which are compressed to the
/// register's low lanes and stored at the write position. That position never passes the
/// read position, so a store covers only keys already loaded.
#[target_feature(enable = "avx512f,popcnt,bmi2")]
pub(super) unsafe fn group_heads<T: Lane, F: Finish<T>, C: Classes<T>>(v: &mut [T]) -> usize {
    let n = v.len();
    let l = T::LANES;
    let p = v.as_mut_ptr();
    let (mut i, mut m) = (0, 0);
    // SAFETY: AVX-512F is enabled. Loads cover `i..i + c` with `c <= n - i`; a store covers
    // `m..m + LANES` only when that lies inside `v` (else its `k` heads, `m + k <= i + c <=
    // n`), and `m <= i`, so it overwrites only keys loaded already.
    unsafe {
        let mut prev = T::splat(T::MAX);
        while i < n {
            let c = (n - i).min(l);
            let x = if c == l {
                T::load(p.add(i))
            } else {
                T::load_first(p.add(i), c)
            };
            let cls = C::reg(x);
            let mut heads = T::differs(cls, T::shift_in(prev, cls)) & first(c);
            if i == 0 {
                heads |= 1;
            }
            let out = T::compress(heads, F::reg(x));
            let k = heads.count_ones() as usize;
            if m + l <= n {
                _mm512_storeu_si512(p.add(m).cast(), out);
            } else {
                T::store_first(p.add(m), k, out);
            }
            m += k;
            prev = cls;
            i += l;
        }
    }
    m
}

/// Finishes every key of `v` (a range placed without the network).
#[inline]
pub(super) fn finish_all<T: Lane, F: Finish<T>>(v: &mut [T]) {
    for k in v {
        *k = F::key(*k);
    }
}

/// The [`Lane`] impls of the key types `$t` of `$lanes` lanes a register (masks of type
/// `$mask`): first the width's intrinsics (set1, masked load and store, compress, not-equal
/// compare, lane 0, shuffle of 128-bit blocks, lane permutation, lane shift) and set of the
/// lane-reversing indices, then, for each type, the intrinsics in its order (less than, at
/// least, min, max, masked max, largest lane).
macro_rules! lane_impl {
    (@split 16) => {
        #[inline]
        #[target_feature(enable = "avx512f,popcnt,bmi2")]
        unsafe fn split(_m: u32, _v: __m512i) -> __m512i {
            unreachable!("16 lanes: the partition compresses each side")
        }
    };
    (@split 8) => {
        #[inline]
        #[target_feature(enable = "avx512f,popcnt,bmi2")]
        unsafe fn split(m: u32, v: __m512i) -> __m512i {
            // SAFETY: `m < 256` indexes the table; the load reads its 8 bytes.
            let idx = unsafe {
                _mm512_cvtepu8_epi64(_mm_loadl_epi64(
                    SPLIT8.as_ptr().add(m as usize & 0xFF).cast(),
                ))
            };
            _mm512_permutexvar_epi64(idx, v)
        }
    };
    (
        $lanes:tt, $mask:ty,
        [$set1:ident, $load:ident, $store:ident, $compress:ident, $neq:ident, $lane0:ident,
            $blocks:ident, $permute:ident, $align:ident, $set:ident];
        $($t:ident: [
            $lt:ident, $ge:ident, $min:ident, $max:ident, $mask_max:ident, $reduce_max:ident
        ]),+
    ) => {$(
        impl Lane for $t {
            const LANES: usize = $lanes;
            const MAX: Self = <$t>::MAX;
            #[inline(always)]
            fn succ(self) -> Option<Self> {
                self.checked_add(1)
            }
            #[inline]
            #[target_feature(enable = "avx512f,popcnt,bmi2")]
            unsafe fn splat(x: Self) -> __m512i {
                $set1(x as _)
            }
            #[inline]
            #[target_feature(enable = "avx512f,popcnt,bmi2")]
            unsafe fn load_first(p: *const Self, n: usize) -> __m512i {
                // SAFETY: the caller guarantees `n` readable lanes at `p`; masked lanes are not
                // read.
                unsafe { $load(Self::splat(Self::MAX), first(n) as $mask, p.cast()) }
            }
            #[inline]
            #[target_feature(enable = "avx512f,popcnt,bmi2")]
            unsafe fn load(p: *const Self) -> __m512i {
                // SAFETY: the caller guarantees `LANES` readable lanes at `p`.
                unsafe { _mm512_loadu_si512(p.cast()) }
            }
            #[inline]
            #[target_feature(enable = "avx512f,popcnt,bmi2")]
            unsafe fn store_first(p: *mut Self, n: usize, v: __m512i) {
                // SAFETY: the caller guarantees `n` writable lanes at `p`; masked lanes are not
                // written.
                unsafe { $store(p.cast(), first(n) as $mask, v) }
            }
            #[inline]
            #[target_feature(enable = "avx512f,popcnt,bmi2")]
            unsafe fn store_mask(p: *mut Self, m: u32, v: __m512i) {
                // SAFETY: the caller guarantees the lanes of `m` writable at `p`; others not
                // written.
                unsafe { $store(p.cast(), m as $mask, v) }
            }
            lane_impl!(@mask below $lt);
            lane_impl!(@mask at_least $ge);
            #[inline]
            #[target_feature(enable = "avx512f,popcnt,bmi2")]
            unsafe fn compress(m: u32, v: __m512i) -> __m512i {
                $compress(m as $mask, v)
            }
            lane_impl!(@split $lanes);
            lane_impl!(@lanewise vmin $min);
            lane_impl!(@lanewise vmax $max);
            #[inline]
            #[target_feature(enable = "avx512f,popcnt,bmi2")]
            unsafe fn mask_max(src: __m512i, m: u32, a: __m512i, b: __m512i) -> __m512i {
                $mask_max(src, m as $mask, a, b)
            }
            #[inline]
            #[target_feature(enable = "avx512f,popcnt,bmi2")]
            unsafe fn xor_lanes(v: __m512i, d: usize) -> __m512i {
                // the distance in 32-bit lanes (twice `d` for 8 lanes of 64 bits)
                match d * (16 / $lanes) {
                    1 => _mm512_shuffle_epi32::<0b10_11_00_01>(v),
                    2 => _mm512_shuffle_epi32::<0b01_00_11_10>(v),
                    4 => $blocks::<0b10_11_00_01>(v, v),
                    _ => $blocks::<0b01_00_11_10>(v, v),
                }
            }
            #[inline]
            #[target_feature(enable = "avx512f,popcnt,bmi2")]
            unsafe fn lane0(v: __m512i) -> Self {
                $lane0(_mm512_castsi512_si128(v)) as Self
            }
            #[inline]
            #[target_feature(enable = "avx512f,popcnt,bmi2")]
            unsafe fn reverse(v: __m512i) -> __m512i {
                $permute(lane_impl!(@reversed $set $lanes), v)
            }
            #[inline]
            #[target_feature(enable = "avx512f,popcnt,bmi2")]
            unsafe fn reduce_max(v: __m512i) -> Self {
                $reduce_max(v)
            }
            lane_impl!(@mask differs $neq);
            #[inline]
            #[target_feature(enable = "avx512f,popcnt,bmi2")]
            unsafe fn shift_in(prev: __m512i, v: __m512i) -> __m512i {
                $align::<{ $lanes - 1 }>(v, prev)
            }
        }
    )+};
    // A compare of two registers into a lane mask, `$name` by the intrinsic `$f`.
    (@mask $name:ident $f:ident) => {
        #[inline]
        #[target_feature(enable = "avx512f,popcnt,bmi2")]
        unsafe fn $name(a: __m512i, b: __m512i) -> u32 {
            $f(a, b) as u32
        }
    };
    // A lane-wise operation on two registers, `$name` by the intrinsic `$f`.
    (@lanewise $name:ident $f:ident) => {
        #[inline]
        #[target_feature(enable = "avx512f,popcnt,bmi2")]
        unsafe fn $name(a: __m512i, b: __m512i) -> __m512i {
            $f(a, b)
        }
    };
    (@reversed $set:ident 16) => {
        $set(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15)
    };
    (@reversed $set:ident 8) => {
        $set(0, 1, 2, 3, 4, 5, 6, 7)
    };
}

lane_impl!(16, u16,
    [_mm512_set1_epi32, _mm512_mask_loadu_epi32, _mm512_mask_storeu_epi32, _mm512_maskz_compress_epi32,
        _mm512_cmpneq_epi32_mask, _mm_cvtsi128_si32, _mm512_shuffle_i32x4, _mm512_permutexvar_epi32, _mm512_alignr_epi32, _mm512_set_epi32];
    u32: [_mm512_cmplt_epu32_mask, _mm512_cmpge_epu32_mask, _mm512_min_epu32, _mm512_max_epu32, _mm512_mask_max_epu32, _mm512_reduce_max_epu32],
    i32: [_mm512_cmplt_epi32_mask, _mm512_cmpge_epi32_mask, _mm512_min_epi32, _mm512_max_epi32, _mm512_mask_max_epi32, _mm512_reduce_max_epi32]
);
lane_impl!(8, u8,
    [_mm512_set1_epi64, _mm512_mask_loadu_epi64, _mm512_mask_storeu_epi64, _mm512_maskz_compress_epi64,
        _mm512_cmpneq_epi64_mask, _mm_cvtsi128_si64, _mm512_shuffle_i64x2, _mm512_permutexvar_epi64, _mm512_alignr_epi64, _mm512_set_epi64];
    u64: [_mm512_cmplt_epu64_mask, _mm512_cmpge_epu64_mask, _mm512_min_epu64, _mm512_max_epu64, _mm512_mask_max_epu64, _mm512_reduce_max_epu64],
    i64: [_mm512_cmplt_epi64_mask, _mm512_cmpge_epi64_mask, _mm512_min_epi64, _mm512_max_epi64, _mm512_mask_max_epi64, _mm512_reduce_max_epi64]
);

/// The lane-wise minimum of `v` and its partner register `p`, the maximum in the lanes of
/// `take_max`: one compare-exchange step of the networks.
///
/// This and the network helpers carry no `#[target_feature]` (which would forbid
/// `#[inline(always)]`): they are always inlined into `sort_regs` or `pivot`, which enable
/// AVX-512F, and may only be called from such functions.
#[inline(always)]
unsafe fn exchange<T: Lane>(v: __m512i, p: __m512i, take_max: u32) -> __m512i {
    // SAFETY: the caller has AVX-512F (see above).
    unsafe { T::mask_max(T::vmin(v, p), take_max, v, p) }
}

network_helpers!(__m512i);

/// The lanes of `v` reversed inside each block of `s` lanes (`s` a power of two from 2 up to
/// `LANES`).
#[inline(always)]
unsafe fn reverse_blocks<T: Lane>(v: __m512i, s: usize) -> __m512i {
    // SAFETY: the caller has AVX-512F (see the note on `exchange`).
    unsafe {
        if s == T::LANES {
            T::reverse(v)
        } else if s == 2 {
            T::xor_lanes(v, 1)
        } else if T::LANES == 8 {
            // 64-bit lanes, s = 4: reversed inside each 256-bit half
            _mm512_permutex_epi64::<0b00_01_10_11>(v)
        } else if s == 4 {
            _mm512_shuffle_epi32::<0b00_01_10_11>(v)
        } else {
            // 32-bit lanes, s = 8
            let idx = _mm512_setr_epi32(7, 6, 5, 4, 3, 2, 1, 0, 15, 14, 13, 12, 11, 10, 9, 8);
            _mm512_permutexvar_epi32(idx, v)
        }
    }
}

/// Sorts the `n` keys at `src` (at most `K * LANES`) with the network into `dst` (which may
/// be `src`: every key is loaded before the first store).
///
/// # Safety
/// AVX-512F; `n` readable keys at `src`, `n` writable slots at `dst`.
#[inline]
#[target_feature(enable = "avx512f,popcnt,bmi2")]
unsafe fn sort_regs<T: Lane, F: Finish<T>, const K: usize>(src: *const T, dst: *mut T, n: usize) {
    let l = T::LANES;
    debug_assert!(n <= K * l);
    // SAFETY: AVX-512F is enabled; every load and store covers only lanes `lo..lo + c` with
    // `lo + c <= n` (the caller's ranges).
    unsafe {
        let mut r = [T::splat(T::MAX); K];
        for (a, ra) in r.iter_mut().enumerate() {
            let lo = a * l;
            if lo < n {
                *ra = T::load_first(src.add(lo), (n - lo).min(l));
            }
        }
        network::<T, K>(&mut r);
        for (a, ra) in r.iter().enumerate() {
            let lo = a * l;
            if lo < n {
                T::store_first(dst.add(lo), (n - lo).min(l), F::reg(*ra));
            }
        }
    }
}

/// The largest range the network sorts.
pub(super) fn small_max<T: Lane>() -> usize {
    16 * T::LANES
}

/// Sorts at most [`small_max`] keys with the smallest network that holds them (finished by
/// `F` as they are stored).
#[target_feature(enable = "avx512f,popcnt,bmi2")]
pub(super) unsafe fn sort_small<T: Lane, F: Finish<T>>(v: &mut [T]) {
    // SAFETY: AVX-512F is enabled here; `v` is both the source and the destination.
    unsafe { sort_small_into::<T, F>(v.as_ptr(), v.as_mut_ptr(), v.len()) }
}

/// [`sort_small`] of the `n` keys at `src` into `dst` (which may be `src`).
///
/// # Safety
/// AVX-512F; `n <= small_max`, `n` readable keys at `src`, `n` writable slots at `dst`.
// Never inlined: inside `quicksort` (as some codegen-unit splits did) the networks' register
// pressure made every level of the recursion slower (1e5 keys: 1.60 -> 1.81 ns/key).
#[inline(never)]
#[target_feature(enable = "avx512f,popcnt,bmi2")]
unsafe fn sort_small_into<T: Lane, F: Finish<T>>(src: *const T, dst: *mut T, n: usize) {
    let l = T::LANES;
    // SAFETY: AVX-512F is enabled here; each network holds `n` keys (the caller's ranges).
    unsafe {
        if n <= l {
            sort_regs::<T, F, 1>(src, dst, n)
        } else if n <= 2 * l {
            sort_regs::<T, F, 2>(src, dst, n)
        } else if n <= 4 * l {
            sort_regs::<T, F, 4>(src, dst, n)
        } else if n <= 8 * l {
            sort_regs::<T, F, 8>(src, dst, n)
        } else {
            sort_regs::<T, F, 16>(src, dst, n)
        }
    }
}

/// Partitions one register's keys: the `c` below the pivot to `p[*lo..]` (advancing `*lo`),
/// the others to just below `*hi` (moving `*hi` down). The left keys are written by a
/// whole-register store (no mask to build), so the lanes past them get garbage, which later
/// stores overwrite; the right ones by a masked store.
///
/// # Safety
/// AVX-512F; the `LANES` slots from `*lo` hold no unread key and no key already written to the
/// right part (they may reach into the `LANES - c` slots this call writes below `*hi`).
#[inline(always)]
unsafe fn put<T: Lane>(p: *mut T, v: __m512i, pv: __m512i, lo: &mut usize, hi: &mut usize) {
    // SAFETY: the caller guarantees AVX-512F, `LANES` free slots at `*lo` and room for the
    // `LANES - c` others below `*hi`, none of them unread.
    unsafe {
        let m = T::below(v, pv);
        let c = m.count_ones() as usize;
        _mm512_storeu_si512(p.add(*lo).cast(), T::compress(m, v));
        *lo += c;
        // the `LANES - c` others: their mask straight from `c` (one shift)
        let all = first(T::LANES);
        *hi = *hi + c - T::LANES;
        T::store_mask(p.add(*hi), all >> c, T::compress(T::at_least(v, pv), v));
    }
}

/// The first `r` keys at `p` as one register (padded with `MAX`), with the mask and the count
/// of those below the pivot register `pv`: the head that both partitions take first.
///
/// # Safety
/// AVX-512F; `r < LANES` readable keys at `p`.
#[inline(always)]
unsafe fn head_below<T: Lane>(p: *const T, r: usize, pv: __m512i) -> (__m512i, u32, usize) {
    // SAFETY: the caller guarantees AVX-512F and `r` readable keys at `p`.
    unsafe {
        let head = T::load_first(p, r);
        let m = T::below(head, pv) & first(r);
        (head, m, m.count_ones() as usize)
    }
}

/// The in-place partition's single-register steps: while unread registers `[rl, rr)` remain,
/// reads one from the end with fewer free slots (`[sl, sr)` is the unwritten span), folds it
/// into the maximum `top` and [`put`]s it.
///
/// # Safety
/// AVX-512F; `put`'s room: at least one register of free slots at each end of the unread span.
#[inline(always)]
unsafe fn put_singles<T: Lane>(
    p: *mut T,
    pv: __m512i,
    (rl, rr): (&mut usize, &mut usize),
    (sl, sr): (&mut usize, &mut usize),
    top: &mut __m512i,
) {
    let l = T::LANES;
    // SAFETY: the caller guarantees AVX-512F and the room `put` needs; loads read unread whole
    // registers inside [rl, rr).
    unsafe {
        while *rl < *rr {
            let x = if *sr - *rr < *rl - *sl {
                *rr -= l;
                T::load(p.add(*rr))
            } else {
                *rl += l;
                T::load(p.add(*rl - l))
            };
            *top = T::vmax(*top, x);
            debug_assert!(*sl + l <= *rl, "a register of free slots at the left");
            put::<T>(p, x, pv, sl, sr);
        }
    }
}

/// How many registers ahead of its reads the partition prefetches (4 KiB): eight steps, which
/// covers memory latency where a step-ahead prefetch did not (one thread, `sort_paths`, same
/// minutes: 10^8 u64 6.27 -> 5.45 ns/key, 10^7 u64 5.0 -> 4.4; 4 steps gave less, 16 the same).
const PREFETCH: usize = 8 * UNROLL;

/// Registers read per step of the partition's main loop.
const UNROLL: usize = 8;
/// Registers buffered at each end: one more than a step reads, which keeps at least one
/// register of free slots between the written left part and the unread keys, so the next
/// loads never overlap the span of the last masked store (a load that does must wait for the
/// store to retire: masked stores do not forward).
const HELD: usize = UNROLL + 1;

/// Partitions `v` (at least `2 * LANES` keys): returns `(m, max)` with every key of `v[..m]`
/// below `pivot`, every key of `v[m..]` at least `pivot`, and `max` the largest key (or
/// `pivot` when larger).
///
/// In place: `HELD` registers from each end are held, leaving `2 * HELD * LANES` free slots
/// between the written left part, the unread middle and the written right part. Each step
/// reads `UNROLL` registers from the end with fewer free slots (so that end then has at least
/// the slots the step writes, and neither end drops below one register of free slots) and
/// writes every key it read, so no unread key is ever overwritten.
#[inline(never)]
#[target_feature(enable = "avx512f,popcnt,bmi2")]
pub(super) unsafe fn partition<T: Lane>(v: &mut [T], pivot: T) -> (usize, T) {
    let l = T::LANES;
    let n = v.len();
    debug_assert!(n >= 2 * l);
    let p = v.as_mut_ptr();
    // SAFETY: AVX-512F is enabled. Loads read unread whole registers inside [left, right);
    // by the invariant above `put` has room for every key it writes (see the doc comment).
    unsafe {
        let pv = T::splat(pivot);
        // The first `r = n % LANES` keys, partitioned as one masked register, leave a multiple
        // of LANES: the `c` below the pivot go to the front, the `r - c` others to the back,
        // and the `r - c` keys they displace there move into the head slots `c..r` (unread).
        let r = n % l;
        let (head, m, c) = head_below::<T>(p, r, pv);
        let g = r - c;
        let tail = T::load_first(p.add(n - g), g);
        T::store_first(p, c, T::compress(m, head));
        T::store_first(p.add(c), g, tail);
        T::store_first(p.add(n - g), g, T::compress(!m & first(r), head));
        let (left, right) = (c, n - g);
        // padding lanes of `head` are MAX: only its `r` keys count for the maximum (the
        // others keep the pivot)
        let mut top = T::mask_max(pv, first(r), pv, head);
        if right - left < 2 * HELD * l {
            // a few registers: buffer one at each end
            let (mut sl, mut sr) = (left, right);
            if right - left == l {
                let x = T::load(p.add(left));
                top = T::vmax(top, x);
                put::<T>(p, x, pv, &mut sl, &mut sr);
                return (sl, T::reduce_max(top));
            }
            if right == left {
                return (left, T::reduce_max(top));
            }
            let first_v = T::load(p.add(left));
            let last_v = T::load(p.add(right - l));
            top = T::vmax(top, T::vmax(first_v, last_v));
            let (mut rl, mut rr) = (left + l, right - l);
            put_singles::<T>(p, pv, (&mut rl, &mut rr), (&mut sl, &mut sr), &mut top);
            // the gap [sl, sr) is the two held registers' slots
            put::<T>(p, first_v, pv, &mut sl, &mut sr);
            put::<T>(p, last_v, pv, &mut sl, &mut sr);
            debug_assert_eq!(sl, sr);
            return (sl, T::reduce_max(top));
        }
        let mut ends = [T::splat(pivot); 2 * HELD];
        for (i, e) in ends.iter_mut().enumerate().take(HELD) {
            *e = T::load(p.add(left + i * l));
        }
        for i in 0..HELD {
            ends[HELD + i] = T::load(p.add(right - (i + 1) * l));
        }
        for e in &ends {
            top = T::vmax(top, *e);
        }
        let (mut rl, mut rr) = (left + HELD * l, right - HELD * l); // unread
        let (mut sl, mut sr) = (left, right); // written: [left, sl) and [sr, right)
        // The two ends are separate code (keys taken in opposite orders, which the partition
        // allows) so that the choice is a predicted branch, not a conditional move whose
        // inputs (the counts of the previous step) the next loads would wait for.
        while rr - rl >= UNROLL * l {
            let mut x = [pv; UNROLL];
            if sr - rr < rl - sl {
                rr -= UNROLL * l;
                for (i, xi) in x.iter_mut().enumerate() {
                    *xi = T::load(p.add(rr + i * l));
                    // the block eight steps on, on this side (a prefetch never faults)
                    let next = p.wrapping_add(rr + i * l).wrapping_sub(PREFETCH * l);
                    _mm_prefetch::<_MM_HINT_T0>(next.cast());
                }
                for xi in x {
                    top = T::vmax(top, xi);
                    debug_assert!(sl + l <= rl, "a register of free slots at the left");
                    put::<T>(p, xi, pv, &mut sl, &mut sr);
                }
            } else {
                for (i, xi) in x.iter_mut().enumerate() {
                    *xi = T::load(p.add(rl + i * l));
                    let next = p.wrapping_add(rl + i * l + PREFETCH * l);
                    _mm_prefetch::<_MM_HINT_T0>(next.cast());
                }
                rl += UNROLL * l;
                for xi in x.into_iter().rev() {
                    top = T::vmax(top, xi);
                    debug_assert!(sl + l <= rl, "a register of free slots at the left");
                    put::<T>(p, xi, pv, &mut sl, &mut sr);
                }
            }
        }
        put_singles::<T>(p, pv, (&mut rl, &mut rr), (&mut sl, &mut sr), &mut top);
        // the gap [sl, sr) is the held registers' slots: at least one register before each put
        for e in ends {
            debug_assert!(sl + l <= sr);
            put::<T>(p, e, pv, &mut sl, &mut sr);
        }
        debug_assert_eq!(sl, sr);
        (sl, T::reduce_max(top))
    }
}

/// A pivot: the median of the keys of a few registers loaded at evenly spaced places (two
/// registers, four from 2^14 keys), sorted together in registers.
///
/// # Safety
/// AVX-512F; `n >= 4 * LANES` readable keys at `p`.
#[target_feature(enable = "avx512f,popcnt,bmi2")]
unsafe fn pivot<T: Lane>(p: *const T, n: usize) -> T {
    let l = T::LANES;
    debug_assert!(n >= 4 * l);
    // SAFETY: AVX-512F is enabled; every register read lies inside the `n` keys (n >= 4
    // LANES, and each start is at least LANES / 2 below and above the ends).
    unsafe {
        let at = |num: usize, den: usize| T::load(p.add(num * n / den - l / 2));
        if n >= 1 << 14 {
            let mut r = [at(1, 8), at(3, 8), at(5, 8), at(7, 8)];
            network::<T, 4>(&mut r);
            T::lane0(r[2])
        } else {
            let mut r = [at(1, 4), at(3, 4)];
            network::<T, 2>(&mut r);
            T::lane0(r[1])
        }
    }
}

/// Partitions the `n` keys at `src` (at least `LANES`) into `dst` (another buffer): returns
/// `(m, max)` with every key of `dst[..m]` below `pivot`, every key of `dst[m..n]` at least
/// `pivot`, and `max` the largest key (or `pivot` when larger).
///
/// Out of place, nothing is held back: each register's keys below the pivot are written by a
/// whole-register store at the left write position (its spare lanes land in slots not
/// written yet: at least a register of them lies between the two write positions while a
/// whole register is left to read), the others by a masked store just below the right one.
/// The first `n % LANES` keys go first, as one masked register.
///
/// # Safety
/// AVX-512F; `n` readable keys at `src`, `n` writable slots at `dst`, the two disjoint.
#[inline(never)]
#[target_feature(enable = "avx512f,popcnt,bmi2")]
unsafe fn partition_into<T: Lane>(src: *const T, n: usize, dst: *mut T, pivot: T) -> (usize, T) {
    let l = T::LANES;
    debug_assert!(n >= l);
    let all = first(l);
    // SAFETY: AVX-512F is enabled. Loads cover whole registers of `src[r..n]`; the stores
    // cover `dst[lo..lo + LANES]` with `lo + LANES <= hi` (the unwritten slots number the
    // unread keys, at least a register) and `dst[hi - (LANES - c)..hi]`.
    unsafe {
        let pv = T::splat(pivot);
        let r = n % l;
        let (head, m, c) = head_below::<T>(src, r, pv);
        T::store_first(dst, c, T::compress(m, head));
        T::store_first(
            dst.add(n - (r - c)),
            r - c,
            T::compress(!m & first(r), head),
        );
        let mut top = T::mask_max(pv, first(r), pv, head); // as in `partition`
        let (mut lo, mut hi) = (c, n - (r - c));
        let mut i = r;
        // While two registers are left to read, the unwritten slots between the write
        // positions number at least two registers, so both sides are written by
        // whole-register stores: the right one's spare lanes land below its keys, in slots
        // not written yet, as the left one's land above its keys.
        while i + 2 * l <= n {
            let x = T::load(src.add(i));
            top = T::vmax(top, x);
            let m = T::below(x, pv);
            let c = m.count_ones() as usize;
            if l == 8 {
                let both = T::split(m, x);
                _mm512_storeu_si512(dst.add(lo).cast(), both);
                _mm512_storeu_si512(dst.add(hi - l).cast(), both);
            } else {
                _mm512_storeu_si512(dst.add(lo).cast(), T::compress(m, x));
                T::store_mask(
                    dst.add(hi + c - l),
                    all >> c,
                    T::compress(T::at_least(x, pv), x),
                );
            }
            lo += c;
            hi = hi + c - l;
            i += l;
        }
        if i < n {
            let x = T::load(src.add(i));
            top = T::vmax(top, x);
            let m = T::below(x, pv);
            let c = m.count_ones() as usize;
            _mm512_storeu_si512(dst.add(lo).cast(), T::compress(m, x));
            lo += c;
            hi = hi + c - l;
            T::store_mask(dst.add(hi), all >> c, T::compress(T::at_least(x, pv), x));
        }
        debug_assert_eq!(lo, hi);
        (lo, T::reduce_max(top))
    }
}

/// Ranges of at most this many keys are sorted out of place, through a buffer on the stack
/// ([`sort_small_oop`]).
pub(super) const SMALL_OOP: usize = 2048;

/// Sorts the `n <= SMALL_OOP` keys at `src` into `dst` (which may be `src`), each finished by
/// `F`; `depth` partitions left before `sort_unstable` takes over.
///
/// Quicksort out of place: each partition reads one buffer and writes another, alternating
/// between `dst` and a buffer on the stack (the data's first buffer, `src`, is only read), and
/// the networks read the last buffer and write `dst`. No key is held back and nothing is
/// copied back, so small partitions cost less than the in-place partition with its held
/// registers; the first partition also does the copy `sort_into` would otherwise make.
///
/// # Safety
/// AVX-512F; `n <= SMALL_OOP`, `n` readable keys at `src`, `n` writable slots at `dst`, and
/// `src` either is `dst` or does not overlap it.
#[target_feature(enable = "avx512f,popcnt,bmi2")]
pub(super) unsafe fn sort_small_oop<T: Lane, F: Finish<T>>(
    src: *const T,
    dst: *mut T,
    n: usize,
    depth: u32,
) {
    debug_assert!(n <= SMALL_OOP);
    if n <= small_max::<T>() {
        // SAFETY: AVX-512F is enabled; a network holds `n` keys.
        unsafe { sort_small_into::<T, F>(src, dst, n) };
        return;
    }
    let mut scratch = [const { std::mem::MaybeUninit::<T>::uninit() }; SMALL_OOP];
    let tmp = scratch.as_mut_ptr().cast::<T>();
    // SAFETY: AVX-512F is enabled; `tmp` holds SMALL_OOP >= n slots and is disjoint from
    // both; the data is read from `src`, partitioned into `tmp`, then alternates between
    // `tmp` and `dst`.
    unsafe { oop::<T, F>(src, tmp, dst, dst, n, depth) }
}

small_oop_level!(
    "avx512f,popcnt,bmi2",
    <T: Lane, F: Finish<T>>,
    copy copy_finish::<T, F>,
    past_depth sort_past_depth::<T, F>
);

/// The keys at `src` sorted into `dst` by `slice::sort_unstable` (the depth limit of
/// [`oop`]), each finished by `F`.
///
/// # Safety
/// As [`copy_finish`].
#[inline(always)]
unsafe fn sort_past_depth<T: Lane, F: Finish<T>>(src: *const T, dst: *mut T, n: usize) {
    // SAFETY: the caller's ranges.
    unsafe {
        copy_finish::<T, Keep>(src, dst, n);
        let v = std::slice::from_raw_parts_mut(dst, n);
        v.sort_unstable();
        finish_all::<T, F>(v);
    }
}

/// `dst[i] = F::key(src[i])` for `n` keys (`src` may be `dst`).
///
/// # Safety
/// `n` readable keys at `src`, `n` writable slots at `dst`, equal or disjoint.
unsafe fn copy_finish<T: Lane, F: Finish<T>>(src: *const T, dst: *mut T, n: usize) {
    for i in 0..n {
        // SAFETY: `i < n` (the caller's ranges).
        unsafe { *dst.add(i) = F::key(*src.add(i)) };
    }
}

/// Below this many keys the two sides of a partition are sorted on the calling thread.
const PARALLEL_SPLIT: usize = 1 << 14;

/// Quicksort of `v`; `depth` partitions left before `sort_unstable` takes over. Every key is
/// finished by `F` once it is in its final place.
#[target_feature(enable = "avx512f,popcnt,bmi2")]
pub(super) unsafe fn quicksort<T: Lane, F: Finish<T>>(v: &mut [T], depth: u32, parallel: bool) {
    let n = v.len();
    if n <= SMALL_OOP {
        // SAFETY: AVX-512F is enabled here; `v` is the source and the destination.
        unsafe { sort_small_oop::<T, F>(v.as_ptr(), v.as_mut_ptr(), n, depth) };
        return;
    }
    if depth == 0 {
        v.sort_unstable();
        finish_all::<T, F>(v);
        return;
    }
    // SAFETY: AVX-512F is enabled here (this function's contract).
    unsafe {
        let p = pivot(v.as_ptr(), n);
        let (mut m, max) = partition(v, p);
        if m == 0 {
            // the pivot is the minimum: split off the keys equal to it
            let p1 = match p.succ() {
                Some(p1) if max != p => p1,
                _ => {
                    finish_all::<T, F>(v);
                    return; // all equal
                }
            };
            m = partition(v, p1).0;
            finish_all::<T, F>(&mut v[..m]);
            quicksort::<T, F>(&mut v[m..], depth - 1, parallel);
            return;
        }
        let (lo, hi) = v.split_at_mut(m);
        let hi_done = max == p; // every key of `hi` equals the pivot
        if parallel && n >= PARALLEL_SPLIT {
            rayon::join(
                // SAFETY: the closures run on threads of this process, where AVX-512F was
                // detected before the first call.
                || quicksort::<T, F>(lo, depth - 1, true),
                || {
                    if hi_done {
                        finish_all::<T, F>(hi);
                    } else {
                        quicksort::<T, F>(hi, depth - 1, true)
                    }
                },
            );
        } else {
            quicksort::<T, F>(lo, depth - 1, false);
            if hi_done {
                finish_all::<T, F>(hi);
            } else {
                quicksort::<T, F>(hi, depth - 1, false);
            }
        }
    }
}
