//! The kernels of [`blocked_products`](super::blocked_products), written with intrinsics (the compiler's own
//! vectorisation of the loop kept the sums in memory, or gathered the rows).

use crate::Element;
use std::any::TypeId;
use std::arch::x86_64::*;

/// `out[p * os + l] = -2 sum_u xs[p][u] c[u * cs + l]` for `l < lanes` (8, 16, 24 or 32).
///
/// # Safety
/// The CPU has AVX-512F and VL; every `xs[p]` points to `d` values, `c` to `d` rows of
/// `cs` values of which the first `lanes` are read, `out` to `P` rows of `os` values of
/// which the first `lanes` are written; `T` is `f32` or `f64`.
#[inline(always)]
pub(super) unsafe fn dots<T: Element, const P: usize>(
    xs: [*const T; P],
    c: *const T,
    cs: usize,
    d: usize,
    out: *mut T,
    os: usize,
    lanes: usize,
) {
    // SAFETY: the caller's contract, and `T` checked before each cast.
    unsafe {
        if TypeId::of::<T>() == TypeId::of::<f32>() {
            let (xs, c, out) = (
                xs.map(|p| p.cast::<f32>()),
                c.cast::<f32>(),
                out.cast::<f32>(),
            );
            match lanes {
                32 => f32s::<P, 2, false>(xs, c, cs, d, out, os),
                24 => f32s::<P, 1, true>(xs, c, cs, d, out, os),
                16 => f32s::<P, 1, false>(xs, c, cs, d, out, os),
                _ => f32s::<P, 0, true>(xs, c, cs, d, out, os),
            }
        } else {
            let (xs, c, out) = (
                xs.map(|p| p.cast::<f64>()),
                c.cast::<f64>(),
                out.cast::<f64>(),
            );
            match lanes {
                32 => f64s::<P, 4>(xs, c, cs, d, out, os),
                24 => f64s::<P, 3>(xs, c, cs, d, out, os),
                16 => f64s::<P, 2>(xs, c, cs, d, out, os),
                _ => f64s::<P, 1>(xs, c, cs, d, out, os),
            }
        }
    }
}

/// Bit `l` set when `norms[l] + row[l] <= bar` (`l < 16`): one or two vector compares.
///
/// # Safety
/// The CPU has AVX-512F; `T` is `f32` or `f64`.
#[inline]
#[target_feature(enable = "avx512f,avx512vl,avx2,fma")]
pub(super) unsafe fn le_mask<T: Element>(row: &[T; 16], norms: &[T; 16], bar: T) -> u32 {
    // SAFETY: the caller's contract; 16 values are read from each array, `T` checked
    // before each cast.
    unsafe {
        if TypeId::of::<T>() == TypeId::of::<f32>() {
            let (r, n) = (row.as_ptr().cast::<f32>(), norms.as_ptr().cast::<f32>());
            let b = _mm512_set1_ps(*(&raw const bar).cast::<f32>());
            let v = _mm512_add_ps(_mm512_loadu_ps(n), _mm512_loadu_ps(r));
            u32::from(_mm512_cmp_ps_mask::<_CMP_LE_OQ>(v, b))
        } else {
            let (r, n) = (row.as_ptr().cast::<f64>(), norms.as_ptr().cast::<f64>());
            let b = _mm512_set1_pd(*(&raw const bar).cast::<f64>());
            let lo = _mm512_add_pd(_mm512_loadu_pd(n), _mm512_loadu_pd(r));
            let hi = _mm512_add_pd(_mm512_loadu_pd(n.add(8)), _mm512_loadu_pd(r.add(8)));
            u32::from(_mm512_cmp_pd_mask::<_CMP_LE_OQ>(lo, b))
                | (u32::from(_mm512_cmp_pd_mask::<_CMP_LE_OQ>(hi, b)) << 8)
        }
    }
}

/// [`dots`] in `f32`: `Z` registers of 16 lanes and, with `Y`, one of 8.
#[target_feature(enable = "avx512f,avx512vl,avx2,fma")]
unsafe fn f32s<const P: usize, const Z: usize, const Y: bool>(
    xs: [*const f32; P],
    c: *const f32,
    cs: usize,
    d: usize,
    out: *mut f32,
    os: usize,
) {
    // SAFETY: in bounds by the caller's contract (`u < d`, `p < P`, lanes `16 Z + 8 Y`).
    unsafe {
        let mut az = [[_mm512_setzero_ps(); Z]; P];
        let mut ay = [_mm256_setzero_ps(); P];
        for u in 0..d {
            let row = c.add(u * cs);
            let cz: [__m512; Z] = std::array::from_fn(|z| _mm512_loadu_ps(row.add(16 * z)));
            let cy = if Y {
                _mm256_loadu_ps(row.add(16 * Z))
            } else {
                _mm256_setzero_ps()
            };
            for ((x, a), b) in xs.iter().zip(&mut az).zip(&mut ay) {
                let v = *x.add(u);
                for (a, c) in a.iter_mut().zip(&cz) {
                    *a = _mm512_fmadd_ps(_mm512_set1_ps(v), *c, *a);
                }
                if Y {
                    *b = _mm256_fmadd_ps(_mm256_set1_ps(v), cy, *b);
                }
            }
        }
        for (p, (a, b)) in az.iter().zip(&ay).enumerate() {
            let o = out.add(p * os);
            for (z, a) in a.iter().enumerate() {
                _mm512_storeu_ps(o.add(16 * z), _mm512_mul_ps(_mm512_set1_ps(-2.0), *a));
            }
            if Y {
                _mm256_storeu_ps(o.add(16 * Z), _mm256_mul_ps(_mm256_set1_ps(-2.0), *b));
            }
        }
    }
}

/// [`dots`] in `f64`: `R` registers of 8 lanes.
#[target_feature(enable = "avx512f,avx512vl,avx2,fma")]
unsafe fn f64s<const P: usize, const R: usize>(
    xs: [*const f64; P],
    c: *const f64,
    cs: usize,
    d: usize,
    out: *mut f64,
    os: usize,
) {
    // SAFETY: in bounds by the caller's contract (`u < d`, `p < P`, lanes `8 R`).
    unsafe {
        let mut acc = [[_mm512_setzero_pd(); R]; P];
        for u in 0..d {
            let row = c.add(u * cs);
            let cr: [__m512d; R] = std::array::from_fn(|r| _mm512_loadu_pd(row.add(8 * r)));
            for (x, a) in xs.iter().zip(&mut acc) {
                let v = _mm512_set1_pd(*x.add(u));
                for (a, c) in a.iter_mut().zip(&cr) {
                    *a = _mm512_fmadd_pd(v, *c, *a);
                }
            }
        }
        for (p, a) in acc.iter().enumerate() {
            for (r, a) in a.iter().enumerate() {
                _mm512_storeu_pd(
                    out.add(p * os + 8 * r),
                    _mm512_mul_pd(_mm512_set1_pd(-2.0), *a),
                );
            }
        }
    }
}
