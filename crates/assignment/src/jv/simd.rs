//! The vector operations the row kernels ([`super::scan`]) are written in: one trait,
//! [`Vector`], implemented for `f64` and `i64` lanes with AVX-512 (8 lanes), AVX2 (4 lanes)
//! and plain scalars (1 lane, any target), and [`Loader`], which reads lanes of a matrix row
//! in its own element type and widens them (`f32` to `f64`, `i32` to `i64`).
//!
//! Column indices travel in the same lanes as the values (`f64` holds every index below
//! 2^53 exactly), so a minimum and its column are selected together.
//!
//! # Safety
//! Every method is `unsafe`: the AVX-512 and AVX2 implementations may only run on a CPU with
//! those features (the kernels are compiled with them enabled and chosen by
//! [`super::scan::Isa::detect`]), and the pointer arguments must be valid for `LANES`
//! elements.

use crate::num::{Elem, Work};

/// An element type with its vector types: lanes of its arithmetic type for each instruction
/// set, which read rows of it.
pub(crate) trait Lanes: Elem {
    /// AVX-512 lanes (scalars off x86-64).
    type V8: Vector<Self::W> + Loader<Self>;
    /// AVX2 lanes (scalars off x86-64).
    type V4: Vector<Self::W> + Loader<Self>;
    /// One lane, for any target.
    type V1: Vector<Self::W> + Loader<Self>;
}

/// `impl Lanes` for each element type of a row: its AVX-512, AVX2 and single lanes.
macro_rules! lanes {
    ($($($e:ty),+ => $v8:ty, $v4:ty, $v1:ty;)*) => {$($(
        impl Lanes for $e {
            type V8 = $v8;
            type V4 = $v4;
            type V1 = $v1;
        }
    )+)*};
}

lanes! {
    f64, f32 => F64x8, F64x4, Scalar<f64>;
    i64, i32 => I64x8, I64x4, Scalar<i64>;
    // `i128` (integers beyond the `i64` scheme) has no vector lanes: one lane everywhere.
    i128 => Scalar<i128>, Scalar<i128>, Scalar<i128>;
}

/// Lanes of the arithmetic type `W`.
pub(crate) trait Vector<W: Work>: Copy {
    /// Lanes per vector.
    const LANES: usize;
    /// The result of a lane-wise comparison.
    type Mask: Copy;
    /// Every lane `x`.
    unsafe fn splat(x: W) -> Self;
    /// Lanes `j, j + 1, ...` as values.
    unsafe fn indices(j: usize) -> Self;
    /// Reads `LANES` values.
    unsafe fn load(p: *const W) -> Self;
    /// Writes `LANES` values.
    unsafe fn store(self, p: *mut W);
    /// `self + o`.
    unsafe fn add(self, o: Self) -> Self;
    /// `self - o`.
    unsafe fn sub(self, o: Self) -> Self;
    /// `self < o`.
    unsafe fn lt(self, o: Self) -> Self::Mask;
    /// `self == o`.
    unsafe fn eq(self, o: Self) -> Self::Mask;
    /// The least lane.
    unsafe fn reduce_min(self) -> W;
    /// `m ? a : b`, lane by lane.
    unsafe fn select(m: Self::Mask, a: Self, b: Self) -> Self;
    /// `self < o ? self : o` (the values are never NaN).
    unsafe fn min(self, o: Self) -> Self;
    /// `o < self ? self : o` (the values are never NaN).
    unsafe fn max(self, o: Self) -> Self;
    /// `p[l] = i` for the lanes `l` set in `m` (`LANES` `u32`s at `p`).
    unsafe fn store_where(m: Self::Mask, p: *mut u32, i: u32);
    /// How many lanes are set in `m`.
    unsafe fn count(m: Self::Mask) -> u32;
    /// The lanes as an array (at most 8).
    unsafe fn to_array(self) -> [W; 8];
}

/// Reads `LANES` entries of element type `E` as lanes of the arithmetic type.
pub(crate) trait Loader<E>: Sized {
    /// Reads and widens `LANES` elements at `p`.
    unsafe fn load_elem(p: *const E) -> Self;
}

/// One lane: the portable version, for any target.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Scalar<W>(W);

impl<W: Work> Vector<W> for Scalar<W> {
    const LANES: usize = 1;
    type Mask = bool;
    #[inline(always)]
    unsafe fn splat(x: W) -> Self {
        Scalar(x)
    }
    #[inline(always)]
    unsafe fn indices(j: usize) -> Self {
        Scalar(W::from_index(j))
    }
    #[inline(always)]
    unsafe fn load(p: *const W) -> Self {
        // SAFETY: forwarded to the caller.
        Scalar(unsafe { *p })
    }
    #[inline(always)]
    unsafe fn store(self, p: *mut W) {
        // SAFETY: forwarded to the caller.
        unsafe { *p = self.0 }
    }
    #[inline(always)]
    unsafe fn add(self, o: Self) -> Self {
        Scalar(self.0 + o.0)
    }
    #[inline(always)]
    unsafe fn sub(self, o: Self) -> Self {
        Scalar(self.0 - o.0)
    }
    #[inline(always)]
    unsafe fn lt(self, o: Self) -> bool {
        self.0 < o.0
    }
    #[inline(always)]
    unsafe fn eq(self, o: Self) -> bool {
        self.0 == o.0
    }
    #[inline(always)]
    unsafe fn reduce_min(self) -> W {
        self.0
    }
    #[inline(always)]
    unsafe fn select(m: bool, a: Self, b: Self) -> Self {
        if m { a } else { b }
    }
    #[inline(always)]
    unsafe fn min(self, o: Self) -> Self {
        if self.0 < o.0 { self } else { o }
    }
    #[inline(always)]
    unsafe fn max(self, o: Self) -> Self {
        if o.0 < self.0 { self } else { o }
    }
    #[inline(always)]
    unsafe fn count(m: bool) -> u32 {
        m as u32
    }
    #[inline(always)]
    unsafe fn store_where(m: bool, p: *mut u32, i: u32) {
        if m {
            // SAFETY: forwarded to the caller.
            unsafe { *p = i }
        }
    }
    #[inline(always)]
    unsafe fn to_array(self) -> [W; 8] {
        [
            self.0,
            W::INF,
            W::INF,
            W::INF,
            W::INF,
            W::INF,
            W::INF,
            W::INF,
        ]
    }
}

/// One element, widened.
impl<E: Elem> Loader<E> for Scalar<E::W> {
    #[inline(always)]
    unsafe fn load_elem(p: *const E) -> Self {
        // SAFETY: forwarded to the caller.
        Scalar(unsafe { *p }.widen())
    }
}

#[cfg(target_arch = "x86_64")]
pub(crate) use x86::{F64x4, F64x8, I64x4, I64x8};

/// The widest vectors of each arithmetic type on this target (scalars elsewhere).
#[cfg(not(target_arch = "x86_64"))]
pub(crate) type F64x8 = Scalar<f64>;
#[cfg(not(target_arch = "x86_64"))]
pub(crate) type F64x4 = Scalar<f64>;
#[cfg(not(target_arch = "x86_64"))]
pub(crate) type I64x8 = Scalar<i64>;
#[cfg(not(target_arch = "x86_64"))]
pub(crate) type I64x4 = Scalar<i64>;

#[cfg(target_arch = "x86_64")]
mod x86 {
    //! AVX-512 and AVX2 lanes. Every function is inlined into a kernel compiled with the
    //! features it needs; the callers guarantee the CPU has them.

    use std::arch::x86_64::*;

    use super::{Loader, Vector};
    use crate::num::Work;

    // SAFETY (every `unsafe` block below): the intrinsics need the features the kernels are
    // compiled with (the callers' contract), and the pointers are valid for the lanes read or
    // written (the callers' contract).

    /// `struct $v` of lanes of `$w` in the register `$reg`, with `Vector<$w>` and `Loader`s of
    /// `$w` and of `$e` (widened) from its instruction set's intrinsics, each given as an
    /// expression of raw registers (`to_array` stores the lanes after `INF` padding; the
    /// masks count and store by [`Mask`]; without `reduce_min`, the least of the first four
    /// lanes of `to_array`).
    macro_rules! vector {
        (
            $(#[$doc:meta])*
            $v:ident($reg:ty): $w:ty, $lanes:literal lanes, mask $mask:ty, widens $e:ty;
            splat: $splat:ident, add: $add:ident, sub: $sub:ident,
            iota: $iota:expr,
            load: |$lp:ident| $load:expr,
            store: |$sp:ident, $sx:ident| $store:expr,
            widen: |$ep:ident| $widen:expr,
            lt: |$la:ident, $lb:ident| $lt:expr,
            eq: |$qa:ident, $qb:ident| $eq:expr,
            select: |$tm:ident, $ta:ident, $tb:ident| $select:expr,
            min: |$na:ident, $nb:ident| $min:expr,
            max: |$xa:ident, $xb:ident| $max:expr,
            reduce_min: |$rs:ident| $reduce_min:expr $(,)?
        ) => {
            $(#[$doc])*
            #[derive(Clone, Copy)]
            pub(crate) struct $v($reg);

            impl Vector<$w> for $v {
                const LANES: usize = $lanes;
                type Mask = $mask;
                #[inline(always)]
                unsafe fn splat(x: $w) -> Self {
                    unsafe { $v($splat(x)) }
                }
                #[inline(always)]
                unsafe fn indices(j: usize) -> Self {
                    unsafe { $v($add($splat(j as $w), $iota)) }
                }
                #[inline(always)]
                unsafe fn load($lp: *const $w) -> Self {
                    unsafe { $v($load) }
                }
                #[inline(always)]
                unsafe fn store(self, $sp: *mut $w) {
                    let $sx = self.0;
                    unsafe { $store }
                }
                #[inline(always)]
                unsafe fn add(self, o: Self) -> Self {
                    unsafe { $v($add(self.0, o.0)) }
                }
                #[inline(always)]
                unsafe fn sub(self, o: Self) -> Self {
                    unsafe { $v($sub(self.0, o.0)) }
                }
                #[inline(always)]
                unsafe fn lt(self, o: Self) -> $mask {
                    let ($la, $lb) = (self.0, o.0);
                    unsafe { $lt }
                }
                #[inline(always)]
                unsafe fn eq(self, o: Self) -> $mask {
                    let ($qa, $qb) = (self.0, o.0);
                    unsafe { $eq }
                }
                #[inline(always)]
                unsafe fn reduce_min(self) -> $w {
                    let $rs = self;
                    unsafe { $reduce_min }
                }
                #[inline(always)]
                unsafe fn select(m: $mask, a: Self, b: Self) -> Self {
                    let ($tm, $ta, $tb) = (m, a.0, b.0);
                    unsafe { $v($select) }
                }
                #[inline(always)]
                unsafe fn min(self, o: Self) -> Self {
                    let ($na, $nb) = (self.0, o.0);
                    unsafe { $v($min) }
                }
                #[inline(always)]
                unsafe fn max(self, o: Self) -> Self {
                    let ($xa, $xb) = (self.0, o.0);
                    unsafe { $v($max) }
                }
                #[inline(always)]
                unsafe fn count(m: $mask) -> u32 {
                    unsafe { Mask::count(m) }
                }
                #[inline(always)]
                unsafe fn store_where(m: $mask, p: *mut u32, i: u32) {
                    unsafe { Mask::store_where(m, p, i) }
                }
                #[inline(always)]
                unsafe fn to_array(self) -> [$w; 8] {
                    let mut a = [<$w as Work>::INF; 8];
                    unsafe { self.store(a.as_mut_ptr()) };
                    a
                }
            }

            impl Loader<$w> for $v {
                #[inline(always)]
                unsafe fn load_elem(p: *const $w) -> Self {
                    unsafe { Self::load(p) }
                }
            }
            impl Loader<$e> for $v {
                #[inline(always)]
                unsafe fn load_elem($ep: *const $e) -> Self {
                    unsafe { $v($widen) }
                }
            }
        };
        (
            $(#[$doc:meta])*
            $v:ident($reg:ty): $w:ty, $lanes:literal lanes, mask $mask:ty, widens $e:ty;
            $($op:tt)*
        ) => {
            vector! {
                $(#[$doc])*
                $v($reg): $w, $lanes lanes, mask $mask, widens $e;
                $($op)*
                reduce_min: |s| {
                    let a = s.to_array();
                    a[0].min(a[1]).min(a[2].min(a[3]))
                },
            }
        };
    }

    vector! {
        /// Eight `f64` lanes (AVX-512).
        F64x8(__m512d): f64, 8 lanes, mask __mmask8, widens f32;
        splat: _mm512_set1_pd, add: _mm512_add_pd, sub: _mm512_sub_pd,
        iota: _mm512_setr_pd(0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0),
        load: |p| _mm512_loadu_pd(p),
        store: |p, x| _mm512_storeu_pd(p, x),
        widen: |p| _mm512_cvtps_pd(_mm256_loadu_ps(p)),
        lt: |a, b| _mm512_cmp_pd_mask::<_CMP_LT_OQ>(a, b),
        eq: |a, b| _mm512_cmp_pd_mask::<_CMP_EQ_OQ>(a, b),
        select: |m, a, b| _mm512_mask_blend_pd(m, b, a),
        min: |a, b| _mm512_min_pd(a, b),
        max: |a, b| _mm512_max_pd(a, b),
        reduce_min: |s| _mm512_reduce_min_pd(s.0),
    }

    vector! {
        /// Eight `i64` lanes (AVX-512).
        I64x8(__m512i): i64, 8 lanes, mask __mmask8, widens i32;
        splat: _mm512_set1_epi64, add: _mm512_add_epi64, sub: _mm512_sub_epi64,
        iota: _mm512_setr_epi64(0, 1, 2, 3, 4, 5, 6, 7),
        load: |p| _mm512_loadu_si512(p as *const __m512i),
        store: |p, x| _mm512_storeu_si512(p as *mut __m512i, x),
        widen: |p| _mm512_cvtepi32_epi64(_mm256_loadu_si256(p as *const __m256i)),
        lt: |a, b| _mm512_cmplt_epi64_mask(a, b),
        eq: |a, b| _mm512_cmpeq_epi64_mask(a, b),
        select: |m, a, b| _mm512_mask_blend_epi64(m, b, a),
        min: |a, b| _mm512_min_epi64(a, b),
        max: |a, b| _mm512_max_epi64(a, b),
        reduce_min: |s| _mm512_reduce_min_epi64(s.0),
    }

    vector! {
        /// Four `f64` lanes (AVX2).
        F64x4(__m256d): f64, 4 lanes, mask __m256d, widens f32;
        splat: _mm256_set1_pd, add: _mm256_add_pd, sub: _mm256_sub_pd,
        iota: _mm256_setr_pd(0.0, 1.0, 2.0, 3.0),
        load: |p| _mm256_loadu_pd(p),
        store: |p, x| _mm256_storeu_pd(p, x),
        widen: |p| _mm256_cvtps_pd(_mm_loadu_ps(p)),
        lt: |a, b| _mm256_cmp_pd::<_CMP_LT_OQ>(a, b),
        eq: |a, b| _mm256_cmp_pd::<_CMP_EQ_OQ>(a, b),
        select: |m, a, b| _mm256_blendv_pd(b, a, m),
        min: |a, b| _mm256_min_pd(a, b),
        max: |a, b| _mm256_max_pd(a, b),
    }

    vector! {
        /// Four `i64` lanes (AVX2).
        I64x4(__m256i): i64, 4 lanes, mask __m256i, widens i32;
        splat: _mm256_set1_epi64x, add: _mm256_add_epi64, sub: _mm256_sub_epi64,
        iota: _mm256_setr_epi64x(0, 1, 2, 3),
        load: |p| _mm256_loadu_si256(p as *const __m256i),
        store: |p, x| _mm256_storeu_si256(p as *mut __m256i, x),
        widen: |p| _mm256_cvtepi32_epi64(_mm_loadu_si128(p as *const __m128i)),
        lt: |a, b| _mm256_cmpgt_epi64(b, a),
        eq: |a, b| _mm256_cmpeq_epi64(a, b),
        select: |m, a, b| _mm256_blendv_epi8(b, a, m),
        // (no 64-bit integer min/max in AVX2: `select(a < b, a, b)` and `select(b < a, a, b)`)
        min: |a, b| _mm256_blendv_epi8(b, a, _mm256_cmpgt_epi64(b, a)),
        max: |a, b| _mm256_blendv_epi8(b, a, _mm256_cmpgt_epi64(a, b)),
    }

    /// A comparison's result: counted, and stored by.
    trait Mask: Copy {
        /// How many lanes are set.
        unsafe fn count(self) -> u32;
        /// `p[l] = i` for the lanes `l` set.
        unsafe fn store_where(self, p: *mut u32, i: u32);
    }

    /// An AVX-512 mask: a bit a lane.
    impl Mask for __mmask8 {
        #[inline(always)]
        unsafe fn count(self) -> u32 {
            self.count_ones()
        }
        #[inline(always)]
        unsafe fn store_where(self, p: *mut u32, i: u32) {
            unsafe { _mm256_mask_storeu_epi32(p as *mut i32, self, _mm256_set1_epi32(i as i32)) }
        }
    }

    /// An AVX2 mask of 64-bit integer lanes: all bits of a lane set or clear.
    impl Mask for __m256i {
        #[inline(always)]
        unsafe fn count(self) -> u32 {
            unsafe { (_mm256_movemask_pd(_mm256_castsi256_pd(self)) as u32).count_ones() }
        }
        #[inline(always)]
        unsafe fn store_where(self, p: *mut u32, i: u32) {
            unsafe { _mm_maskstore_epi32(p as *mut i32, narrow(self), _mm_set1_epi32(i as i32)) }
        }
    }

    /// An AVX2 mask of `f64` lanes: all bits of a lane set or clear.
    impl Mask for __m256d {
        #[inline(always)]
        unsafe fn count(self) -> u32 {
            unsafe { (_mm256_movemask_pd(self) as u32).count_ones() }
        }
        #[inline(always)]
        unsafe fn store_where(self, p: *mut u32, i: u32) {
            unsafe { _mm256_castpd_si256(self).store_where(p, i) }
        }
    }

    /// The low 32 bits of each 64-bit lane of a mask: a 4 x 32-bit mask for `maskstore`.
    #[inline(always)]
    unsafe fn narrow(m: __m256i) -> __m128i {
        unsafe {
            _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(
                m,
                _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6),
            ))
        }
    }
}
