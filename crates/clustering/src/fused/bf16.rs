//! The float32 kernel's bfloat16 pass with AVX-512 BF16 (the centres, the bounds and why
//! they hold: [`crate::bf16`]).

use crate::Element;
use crate::bf16::{Packed, REG, shifted_norm_bound};
use crate::centres::Centres;
use crate::fused::x86::{Z32, row_label, same};
use crate::fused::{Buffer, GROUP};
use std::arch::x86_64::*;

/// Rows per block (accumulators: six rows of up to four registers of centres).
const P: usize = 6;

/// The labels of the rows of `x` into `out` by the bfloat16 pass when `cent` was packed
/// for it (then `true`); `false` leaves `out` to the other kernels.
///
/// # Safety
/// The CPU has AVX-512 (F, VL, BW, DQ) and AVX-512 BF16 with AVX2, FMA, BMI2 and POPCNT
/// (true wherever `cent.bf16` is set); `buf` is sized for the rows.
#[target_feature(
    enable = "avx512f,avx512vl,avx512bw,avx512dq,avx512bf16,avx2,fma,bmi1,bmi2,popcnt"
)]
pub(super) unsafe fn labels<T: Element>(
    x: &[T],
    cent: &Centres<T>,
    buf: &mut Buffer<T>,
    out: &mut [u32],
) -> bool {
    let Some(bp) = cent.bf16.as_deref() else {
        return false;
    };
    let (d, kp, dh) = (cent.d, cent.kp, bp.dp / 2);
    let xf: &[f32] = same(x);
    let per = GROUP * P;
    buf.xb.resize(per * dh, 0);
    let inf = T::from_f64(f64::INFINITY);
    let nv = kp / 16;
    for (gi, orow) in out.chunks_mut(per).enumerate() {
        let (rows, g0) = (orow.len(), gi * per);
        for r in 0..rows {
            // SAFETY: row `g0 + r` holds `d` values; its copy `dh` words.
            let xs = unsafe {
                convert(
                    xf[(g0 + r) * d..].as_ptr(),
                    d,
                    bp,
                    buf.xb[r * dh..].as_mut_ptr(),
                )
            };
            let err = bp.err(xs, d);
            buf.err2[r] = 2.0 * err;
            buf.width[r] = if bp.finite(xs) {
                T::from_f64(2.1 * err)
            } else {
                inf
            };
        }
        let vf: &mut [f32] = {
            let vals = &mut buf.vals;
            assert!(vals.len() >= per * kp && size_of::<T>() == 4);
            // SAFETY: `T` is `f32` (`same` checked it above).
            unsafe { std::slice::from_raw_parts_mut(vals.as_mut_ptr().cast(), vals.len()) }
        };
        let (widths, err2): (&[f32], &[f64]) = (same(&buf.width), &buf.err2);
        // SAFETY: the copies hold `rows` rows of `dh` words; `vf` a group's values.
        unsafe {
            // With the data streaming from memory, the next group's rows are asked for
            // while this group's last chunk of centres is multiplied.
            let next = cent
                .prefetch
                .then(|| (xf.as_ptr().wrapping_add((g0 + per) * d), d));
            values((&buf.xb, dh, rows), bp, kp, vf, next, |i, row| {
                let xr = &x[(g0 + i) * d..(g0 + i + 1) * d];
                orow[i] = row_label::<T, Z32, f32>(xr, cent, row, nv, widths[i], err2[i]);
            });
        }
    }
    true
}

/// Row `x` (`d` values) less the shift, rounded to bfloat16 into `dst` (`dp / 2` words,
/// zeros past `d`); returns the bound on `|x - s|` ([`shifted_norm_bound`]).
///
/// # Safety
/// The CPU has AVX-512F and AVX-512 BF16; `x` holds `d` values, `dst` `dp / 2` words.
#[inline(always)]
unsafe fn convert(x: *const f32, d: usize, bp: &Packed, dst: *mut u32) -> f64 {
    // SAFETY: the caller's contract; masked loads read only the row's `d` values.
    unsafe {
        let mut acc = _mm512_setzero_ps();
        let s = bp.shift.as_ptr();
        for t in (0..bp.dp).step_by(REG) {
            let lanes = |o: usize| -> __mmask16 {
                let left = d.saturating_sub(t + o).min(16);
                ((1u32 << left) - 1) as __mmask16
            };
            let lo = _mm512_sub_ps(
                _mm512_maskz_loadu_ps(lanes(0), x.add(t)),
                _mm512_loadu_ps(s.add(t)),
            );
            let hi = _mm512_sub_ps(
                _mm512_maskz_loadu_ps(lanes(16), x.add(t + 16)),
                _mm512_loadu_ps(s.add(t + 16)),
            );
            acc = _mm512_fmadd_ps(lo, lo, acc);
            acc = _mm512_fmadd_ps(hi, hi, acc);
            let b: __m512i = std::mem::transmute(_mm512_cvtne2ps_pbh(hi, lo));
            _mm512_storeu_si512(dst.add(t / 2).cast(), b);
        }
        shifted_norm_bound(_mm512_reduce_add_ps(acc), d)
    }
}

/// The values of the copies `xb` (`n <= GROUP * P` rows of `dh` words, in blocks of
/// [`P`]) against every register of centres, chunk by chunk of at most
/// four registers, into `vals` (row `p` at `p * kp`), then `each(row, values)` for each
/// row in order (as the `f32` kernel's `values` for one group).
///
/// # Safety
/// The CPU has AVX-512F and AVX-512 BF16; `vals` holds `GROUP * P * kp` values.
#[inline(always)]
unsafe fn values(
    (xb, dh, n): (&[u32], usize, usize),
    bp: &Packed,
    kp: usize,
    vals: &mut [f32],
    next: Option<(*const f32, usize)>,
    mut each: impl FnMut(usize, &[f32]),
) {
    debug_assert!(n <= GROUP * P);
    let blocks = n.div_ceil(P);
    {
        let mut col = 0;
        while col < kp {
            let regs = ((kp - col) / 16).min(4);
            let (c, nm) = (bp.words[col..].as_ptr(), bp.norms[col..].as_ptr());
            // The last chunk's centres are already in the L1 cache after its first block:
            // lines asked for then stay there until the next group's conversion.
            let ahead = next.filter(|_| col + regs * 16 == kp);
            for blk in 0..blocks {
                let first = blk * P;
                let xs: [*const u32; P] =
                    std::array::from_fn(|p| xb[(first + p).min(n - 1) * dh..].as_ptr());
                let o = vals[blk * P * kp + col..].as_mut_ptr();
                // SAFETY: `col + regs * 16 <= kp` lanes of each of the `dh` rows of
                // `c`, of the norms and of the block's rows of `vals`; prefetches
                // never fault.
                unsafe {
                    match (regs, ahead) {
                        (1, _) => chunk::<1>(xs, c, kp, nm, dh, o, None),
                        (2, _) => chunk::<2>(xs, c, kp, nm, dh, o, None),
                        (3, _) => chunk::<3>(xs, c, kp, nm, dh, o, None),
                        (_, None) => chunk::<4>(xs, c, kp, nm, dh, o, None),
                        (_, Some((x, d))) => {
                            let rows = x.wrapping_add(first * d);
                            chunk::<4>(xs, c, kp, nm, dh, o, Some((rows, d)))
                        }
                    }
                }
            }
            col += regs * 16;
        }
        for i in 0..n {
            each(i, &vals[i * kp..(i + 1) * kp]);
        }
    }
}

/// The values of [`P`] rows against `B` registers of centres: `out[p * kp + l] =
/// norms[l] + sum_t xs[p][t] . c[t * kp + l]`, each term a pair of bfloat16 products;
/// with `ahead` (`P` rows of `d` values, not read), their lines asked for among the
/// multiply-adds.
///
/// # Safety
/// The CPU has AVX-512F and AVX-512 BF16; each `xs[p]` points to `dh` words, `c` to `dh`
/// rows of `kp` words, `norms` to `B * 16` values, `out` to `P` rows of `kp` values.
#[inline(always)]
unsafe fn chunk<const B: usize>(
    xs: [*const u32; P],
    c: *const u32,
    kp: usize,
    norms: *const f32,
    dh: usize,
    out: *mut f32,
    ahead: Option<(*const f32, usize)>,
) {
    // SAFETY: in bounds by the caller's contract; prefetches never fault.
    unsafe {
        let mut n0 = [_mm512_setzero_ps(); B];
        for (b, v) in n0.iter_mut().enumerate() {
            *v = _mm512_loadu_ps(norms.add(b * 16));
        }
        let mut acc = [n0; P];
        let zero: __m512bh = std::mem::transmute(_mm512_setzero_si512());
        let mut cv = [zero; B];
        for t in 0..dh {
            if let Some((x, d)) = ahead
                && t % 8 == 0
            {
                // Line `t / 8` of each row: 16 values, as 8 words of its copy.
                for p in 0..P {
                    let line = x.wrapping_add(p * d + 2 * t);
                    _mm_prefetch::<_MM_HINT_T0>(line.cast::<i8>());
                }
            }
            let row = c.add(t * kp);
            for (b, v) in cv.iter_mut().enumerate() {
                *v = std::mem::transmute::<__m512i, __m512bh>(_mm512_loadu_si512(
                    row.add(b * 16).cast(),
                ));
            }
            for (a, x) in acc.iter_mut().zip(&xs) {
                let xv: __m512bh = std::mem::transmute(_mm512_set1_epi32(*x.add(t) as i32));
                for (a, c) in a.iter_mut().zip(&cv) {
                    *a = _mm512_dpbf16_ps(*a, xv, *c);
                }
            }
        }
        for (p, a) in acc.iter().enumerate() {
            for (b, a) in a.iter().enumerate() {
                _mm512_storeu_ps(out.add(p * kp + b * 16), *a);
            }
        }
    }
}
