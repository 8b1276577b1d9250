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

impl Lanes for f64 {
    type V8 = F64x8;
    type V4 = F64x4;
    type V1 = Scalar<f64>;
}
impl Lanes for f32 {
    type V8 = F64x8;
    type V4 = F64x4;
    type V1 = Scalar<f64>;
}
impl Lanes for i64 {
    type V8 = I64x8;
    type V4 = I64x4;
    type V1 = Scalar<i64>;
}
impl Lanes for i32 {
    type V8 = I64x8;
    type V4 = I64x4;
    type V1 = Scalar<i64>;
}
/// `i128` (integers beyond the `i64` scheme) has no vector lanes: one lane everywhere.
impl Lanes for i128 {
    type V8 = Scalar<i128>;
    type V4 = Scalar<i128>;
    type V1 = Scalar<i128>;
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

impl Loader<f64> for Scalar<f64> {
    #[inline(always)]
    unsafe fn load_elem(p: *const f64) -> Self {
        // SAFETY: forwarded to the caller.
        Scalar(unsafe { *p })
    }
}
impl Loader<f32> for Scalar<f64> {
    #[inline(always)]
    unsafe fn load_elem(p: *const f32) -> Self {
        // SAFETY: forwarded to the caller.
        Scalar(unsafe { *p } as f64)
    }
}
impl Loader<i64> for Scalar<i64> {
    #[inline(always)]
    unsafe fn load_elem(p: *const i64) -> Self {
        // SAFETY: forwarded to the caller.
        Scalar(unsafe { *p })
    }
}
impl Loader<i32> for Scalar<i64> {
    #[inline(always)]
    unsafe fn load_elem(p: *const i32) -> Self {
        // SAFETY: forwarded to the caller.
        Scalar(unsafe { *p } as i64)
    }
}
impl Loader<i128> for Scalar<i128> {
    #[inline(always)]
    unsafe fn load_elem(p: *const i128) -> Self {
        // SAFETY: forwarded to the caller.
        Scalar(unsafe { *p })
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

    /// Eight `f64` lanes (AVX-512).
    #[derive(Clone, Copy)]
    pub(crate) struct F64x8(__m512d);
    /// Eight `i64` lanes (AVX-512).
    #[derive(Clone, Copy)]
    pub(crate) struct I64x8(__m512i);
    /// Four `f64` lanes (AVX2).
    #[derive(Clone, Copy)]
    pub(crate) struct F64x4(__m256d);
    /// Four `i64` lanes (AVX2).
    #[derive(Clone, Copy)]
    pub(crate) struct I64x4(__m256i);

    // SAFETY (every `unsafe` block below): the intrinsics need the features the kernels are
    // compiled with (the callers' contract), and the pointers are valid for the lanes read or
    // written (the callers' contract).

    impl Vector<f64> for F64x8 {
        const LANES: usize = 8;
        type Mask = __mmask8;
        #[inline(always)]
        unsafe fn splat(x: f64) -> Self {
            unsafe { F64x8(_mm512_set1_pd(x)) }
        }
        #[inline(always)]
        unsafe fn indices(j: usize) -> Self {
            unsafe {
                let b = j as f64;
                F64x8(_mm512_add_pd(
                    _mm512_set1_pd(b),
                    _mm512_setr_pd(0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0),
                ))
            }
        }
        #[inline(always)]
        unsafe fn load(p: *const f64) -> Self {
            unsafe { F64x8(_mm512_loadu_pd(p)) }
        }
        #[inline(always)]
        unsafe fn store(self, p: *mut f64) {
            unsafe { _mm512_storeu_pd(p, self.0) }
        }
        #[inline(always)]
        unsafe fn add(self, o: Self) -> Self {
            unsafe { F64x8(_mm512_add_pd(self.0, o.0)) }
        }
        #[inline(always)]
        unsafe fn sub(self, o: Self) -> Self {
            unsafe { F64x8(_mm512_sub_pd(self.0, o.0)) }
        }
        #[inline(always)]
        unsafe fn lt(self, o: Self) -> __mmask8 {
            unsafe { _mm512_cmp_pd_mask::<_CMP_LT_OQ>(self.0, o.0) }
        }
        #[inline(always)]
        unsafe fn eq(self, o: Self) -> Self::Mask {
            unsafe { _mm512_cmp_pd_mask::<_CMP_EQ_OQ>(self.0, o.0) }
        }
        #[inline(always)]
        unsafe fn reduce_min(self) -> f64 {
            unsafe { _mm512_reduce_min_pd(self.0) }
        }
        #[inline(always)]
        unsafe fn select(m: __mmask8, a: Self, b: Self) -> Self {
            unsafe { F64x8(_mm512_mask_blend_pd(m, b.0, a.0)) }
        }
        #[inline(always)]
        unsafe fn min(self, o: Self) -> Self {
            unsafe { F64x8(_mm512_min_pd(self.0, o.0)) }
        }
        #[inline(always)]
        unsafe fn max(self, o: Self) -> Self {
            unsafe { F64x8(_mm512_max_pd(self.0, o.0)) }
        }
        #[inline(always)]
        unsafe fn count(m: __mmask8) -> u32 {
            m.count_ones()
        }
        #[inline(always)]
        unsafe fn store_where(m: __mmask8, p: *mut u32, i: u32) {
            unsafe { _mm256_mask_storeu_epi32(p as *mut i32, m, _mm256_set1_epi32(i as i32)) }
        }
        #[inline(always)]
        unsafe fn to_array(self) -> [f64; 8] {
            unsafe {
                let mut a = [0.0; 8];
                _mm512_storeu_pd(a.as_mut_ptr(), self.0);
                a
            }
        }
    }

    impl Loader<f64> for F64x8 {
        #[inline(always)]
        unsafe fn load_elem(p: *const f64) -> Self {
            unsafe { F64x8(_mm512_loadu_pd(p)) }
        }
    }
    impl Loader<f32> for F64x8 {
        #[inline(always)]
        unsafe fn load_elem(p: *const f32) -> Self {
            unsafe { F64x8(_mm512_cvtps_pd(_mm256_loadu_ps(p))) }
        }
    }

    impl Vector<i64> for I64x8 {
        const LANES: usize = 8;
        type Mask = __mmask8;
        #[inline(always)]
        unsafe fn splat(x: i64) -> Self {
            unsafe { I64x8(_mm512_set1_epi64(x)) }
        }
        #[inline(always)]
        unsafe fn indices(j: usize) -> Self {
            unsafe {
                I64x8(_mm512_add_epi64(
                    _mm512_set1_epi64(j as i64),
                    _mm512_setr_epi64(0, 1, 2, 3, 4, 5, 6, 7),
                ))
            }
        }
        #[inline(always)]
        unsafe fn load(p: *const i64) -> Self {
            unsafe { I64x8(_mm512_loadu_si512(p as *const __m512i)) }
        }
        #[inline(always)]
        unsafe fn store(self, p: *mut i64) {
            unsafe { _mm512_storeu_si512(p as *mut __m512i, self.0) }
        }
        #[inline(always)]
        unsafe fn add(self, o: Self) -> Self {
            unsafe { I64x8(_mm512_add_epi64(self.0, o.0)) }
        }
        #[inline(always)]
        unsafe fn sub(self, o: Self) -> Self {
            unsafe { I64x8(_mm512_sub_epi64(self.0, o.0)) }
        }
        #[inline(always)]
        unsafe fn lt(self, o: Self) -> __mmask8 {
            unsafe { _mm512_cmplt_epi64_mask(self.0, o.0) }
        }
        #[inline(always)]
        unsafe fn eq(self, o: Self) -> Self::Mask {
            unsafe { _mm512_cmpeq_epi64_mask(self.0, o.0) }
        }
        #[inline(always)]
        unsafe fn reduce_min(self) -> i64 {
            unsafe { _mm512_reduce_min_epi64(self.0) }
        }
        #[inline(always)]
        unsafe fn select(m: __mmask8, a: Self, b: Self) -> Self {
            unsafe { I64x8(_mm512_mask_blend_epi64(m, b.0, a.0)) }
        }
        #[inline(always)]
        unsafe fn min(self, o: Self) -> Self {
            unsafe { I64x8(_mm512_min_epi64(self.0, o.0)) }
        }
        #[inline(always)]
        unsafe fn max(self, o: Self) -> Self {
            unsafe { I64x8(_mm512_max_epi64(self.0, o.0)) }
        }
        #[inline(always)]
        unsafe fn count(m: __mmask8) -> u32 {
            m.count_ones()
        }
        #[inline(always)]
        unsafe fn store_where(m: __mmask8, p: *mut u32, i: u32) {
            unsafe { _mm256_mask_storeu_epi32(p as *mut i32, m, _mm256_set1_epi32(i as i32)) }
        }
        #[inline(always)]
        unsafe fn to_array(self) -> [i64; 8] {
            unsafe {
                let mut a = [0i64; 8];
                _mm512_storeu_si512(a.as_mut_ptr() as *mut __m512i, self.0);
                a
            }
        }
    }

    impl Loader<i64> for I64x8 {
        #[inline(always)]
        unsafe fn load_elem(p: *const i64) -> Self {
            unsafe { I64x8(_mm512_loadu_si512(p as *const __m512i)) }
        }
    }
    impl Loader<i32> for I64x8 {
        #[inline(always)]
        unsafe fn load_elem(p: *const i32) -> Self {
            unsafe {
                I64x8(_mm512_cvtepi32_epi64(_mm256_loadu_si256(
                    p as *const __m256i,
                )))
            }
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

    impl Vector<f64> for F64x4 {
        const LANES: usize = 4;
        type Mask = __m256d;
        #[inline(always)]
        unsafe fn splat(x: f64) -> Self {
            unsafe { F64x4(_mm256_set1_pd(x)) }
        }
        #[inline(always)]
        unsafe fn indices(j: usize) -> Self {
            unsafe {
                F64x4(_mm256_add_pd(
                    _mm256_set1_pd(j as f64),
                    _mm256_setr_pd(0.0, 1.0, 2.0, 3.0),
                ))
            }
        }
        #[inline(always)]
        unsafe fn load(p: *const f64) -> Self {
            unsafe { F64x4(_mm256_loadu_pd(p)) }
        }
        #[inline(always)]
        unsafe fn store(self, p: *mut f64) {
            unsafe { _mm256_storeu_pd(p, self.0) }
        }
        #[inline(always)]
        unsafe fn add(self, o: Self) -> Self {
            unsafe { F64x4(_mm256_add_pd(self.0, o.0)) }
        }
        #[inline(always)]
        unsafe fn sub(self, o: Self) -> Self {
            unsafe { F64x4(_mm256_sub_pd(self.0, o.0)) }
        }
        #[inline(always)]
        unsafe fn lt(self, o: Self) -> __m256d {
            unsafe { _mm256_cmp_pd::<_CMP_LT_OQ>(self.0, o.0) }
        }
        #[inline(always)]
        unsafe fn eq(self, o: Self) -> Self::Mask {
            unsafe { _mm256_cmp_pd::<_CMP_EQ_OQ>(self.0, o.0) }
        }
        #[inline(always)]
        unsafe fn reduce_min(self) -> f64 {
            unsafe {
                let a = self.to_array();
                a[0].min(a[1]).min(a[2].min(a[3]))
            }
        }
        #[inline(always)]
        unsafe fn select(m: __m256d, a: Self, b: Self) -> Self {
            unsafe { F64x4(_mm256_blendv_pd(b.0, a.0, m)) }
        }
        #[inline(always)]
        unsafe fn min(self, o: Self) -> Self {
            unsafe { F64x4(_mm256_min_pd(self.0, o.0)) }
        }
        #[inline(always)]
        unsafe fn max(self, o: Self) -> Self {
            unsafe { F64x4(_mm256_max_pd(self.0, o.0)) }
        }
        #[inline(always)]
        unsafe fn count(m: __m256d) -> u32 {
            unsafe { (_mm256_movemask_pd(m) as u32).count_ones() }
        }
        #[inline(always)]
        unsafe fn store_where(m: __m256d, p: *mut u32, i: u32) {
            unsafe {
                _mm_maskstore_epi32(
                    p as *mut i32,
                    narrow(_mm256_castpd_si256(m)),
                    _mm_set1_epi32(i as i32),
                )
            }
        }
        #[inline(always)]
        unsafe fn to_array(self) -> [f64; 8] {
            unsafe {
                let mut a = [f64::INFINITY; 8];
                _mm256_storeu_pd(a.as_mut_ptr(), self.0);
                a
            }
        }
    }

    impl Loader<f64> for F64x4 {
        #[inline(always)]
        unsafe fn load_elem(p: *const f64) -> Self {
            unsafe { F64x4(_mm256_loadu_pd(p)) }
        }
    }
    impl Loader<f32> for F64x4 {
        #[inline(always)]
        unsafe fn load_elem(p: *const f32) -> Self {
            unsafe { F64x4(_mm256_cvtps_pd(_mm_loadu_ps(p))) }
        }
    }

    impl Vector<i64> for I64x4 {
        const LANES: usize = 4;
        type Mask = __m256i;
        #[inline(always)]
        unsafe fn splat(x: i64) -> Self {
            unsafe { I64x4(_mm256_set1_epi64x(x)) }
        }
        #[inline(always)]
        unsafe fn indices(j: usize) -> Self {
            unsafe {
                I64x4(_mm256_add_epi64(
                    _mm256_set1_epi64x(j as i64),
                    _mm256_setr_epi64x(0, 1, 2, 3),
                ))
            }
        }
        #[inline(always)]
        unsafe fn load(p: *const i64) -> Self {
            unsafe { I64x4(_mm256_loadu_si256(p as *const __m256i)) }
        }
        #[inline(always)]
        unsafe fn store(self, p: *mut i64) {
            unsafe { _mm256_storeu_si256(p as *mut __m256i, self.0) }
        }
        #[inline(always)]
        unsafe fn add(self, o: Self) -> Self {
            unsafe { I64x4(_mm256_add_epi64(self.0, o.0)) }
        }
        #[inline(always)]
        unsafe fn sub(self, o: Self) -> Self {
            unsafe { I64x4(_mm256_sub_epi64(self.0, o.0)) }
        }
        #[inline(always)]
        unsafe fn lt(self, o: Self) -> __m256i {
            unsafe { _mm256_cmpgt_epi64(o.0, self.0) }
        }
        #[inline(always)]
        unsafe fn eq(self, o: Self) -> Self::Mask {
            unsafe { _mm256_cmpeq_epi64(self.0, o.0) }
        }
        #[inline(always)]
        unsafe fn reduce_min(self) -> i64 {
            unsafe {
                let a = self.to_array();
                a[0].min(a[1]).min(a[2].min(a[3]))
            }
        }
        #[inline(always)]
        unsafe fn select(m: __m256i, a: Self, b: Self) -> Self {
            unsafe { I64x4(_mm256_blendv_epi8(b.0, a.0, m)) }
        }
        #[inline(always)]
        unsafe fn min(self, o: Self) -> Self {
            unsafe {
                // SAFETY: forwarded.
                Self::select(self.lt(o), self, o)
            }
        }
        #[inline(always)]
        unsafe fn max(self, o: Self) -> Self {
            unsafe { Self::select(o.lt(self), self, o) }
        }
        #[inline(always)]
        unsafe fn count(m: __m256i) -> u32 {
            unsafe { (_mm256_movemask_pd(_mm256_castsi256_pd(m)) as u32).count_ones() }
        }
        #[inline(always)]
        unsafe fn store_where(m: __m256i, p: *mut u32, i: u32) {
            unsafe { _mm_maskstore_epi32(p as *mut i32, narrow(m), _mm_set1_epi32(i as i32)) }
        }
        #[inline(always)]
        unsafe fn to_array(self) -> [i64; 8] {
            unsafe {
                let mut a = [<i64 as crate::num::Work>::INF; 8];
                _mm256_storeu_si256(a.as_mut_ptr() as *mut __m256i, self.0);
                a
            }
        }
    }

    impl Loader<i64> for I64x4 {
        #[inline(always)]
        unsafe fn load_elem(p: *const i64) -> Self {
            unsafe { I64x4(_mm256_loadu_si256(p as *const __m256i)) }
        }
    }
    impl Loader<i32> for I64x4 {
        #[inline(always)]
        unsafe fn load_elem(p: *const i32) -> Self {
            unsafe { I64x4(_mm256_cvtepi32_epi64(_mm_loadu_si128(p as *const __m128i))) }
        }
    }
}
