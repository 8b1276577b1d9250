//! The fused kernel's bfloat16 pass with AVX-512 BF16, for `f32` and `f64` points (the
//! centres, the bounds and why they hold: [`crate::bf16`]).

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
    let (d, kp, dh) = (cent.d, bp.kp, bp.dp / 2);
    let per = GROUP * P;
    buf.xb.resize(per * dh, 0);
    buf.bvals.resize(per * kp, 0.0);
    buf.bwidth.resize(per, 0.0);
    let nv = kp / 16;
    for (gi, orow) in out.chunks_mut(per).enumerate() {
        let (rows, g0) = (orow.len(), gi * per);
        for r in 0..rows {
            let (row, dst) = (&x[(g0 + r) * d..(g0 + r + 1) * d], &mut buf.xb[r * dh..]);
            // SAFETY: `row` holds `d` values, `dst` at least `dh` words.
            let xs = unsafe { convert(row, bp, dst.as_mut_ptr()) };
            let err = bp.err(xs, d);
            buf.err2[r] = 2.0 * err;
            buf.bwidth[r] = if bp.finite(xs) {
                (2.1 * err) as f32
            } else {
                f32::INFINITY
            };
        }
        let (widths, err2) = (&buf.bwidth, &buf.err2);
        // SAFETY: the copies hold `rows` rows of `dh` words; `bvals` a group's values.
        unsafe {
            // With the data streaming from memory, the next group's rows are asked for
            // while this group's last chunk of centres is multiplied.
            let next = cent.prefetch.then(|| {
                let rows = x.as_ptr().wrapping_add((g0 + per) * d).cast::<u8>();
                (rows, d * size_of::<T>())
            });
            values((&buf.xb, dh, rows), bp, &mut buf.bvals, next, |i, row| {
                let xr = &x[(g0 + i) * d..(g0 + i + 1) * d];
                orow[i] = row_label::<T, Z32, f32>(xr, cent, row, nv, widths[i], err2[i]);
            });
        }
    }
    true
}

/// Row `x` less the shift, rounded to bfloat16 into `dst` (`dp / 2` words, zeros past
/// `x.len()`); returns the bound on `|x - s|` ([`shifted_norm_bound`]).
///
/// # Safety
/// The CPU has AVX-512F and AVX-512 BF16; `dst` holds `dp / 2` words.
#[inline(always)]
unsafe fn convert<T: Element>(x: &[T], bp: &Packed, dst: *mut u32) -> f64 {
    // SAFETY: the caller's contract.
    unsafe {
        let mut acc = _mm512_setzero_ps();
        for t in (0..bp.dp).step_by(REG) {
            let (lo, hi) = (shifted16(x, bp, t), shifted16(x, bp, t + 16));
            acc = _mm512_fmadd_ps(lo, lo, acc);
            acc = _mm512_fmadd_ps(hi, hi, acc);
            let b: __m512i = std::mem::transmute(_mm512_cvtne2ps_pbh(hi, lo));
            _mm512_storeu_si512(dst.add(t / 2).cast(), b);
        }
        shifted_norm_bound(_mm512_reduce_add_ps(acc), x.len())
    }
}

/// Values `t..t + 16` of row `x` (zeros past its end) less the shift, in `f32`: `f32`
/// values less the `f32` shift; `f64` values less the shift in `f64`, then rounded.
///
/// # Safety
/// The CPU has AVX-512F; `t + 16 <= bp.dp`.
#[inline(always)]
unsafe fn shifted16<T: Element>(x: &[T], bp: &Packed, t: usize) -> __m512 {
    let left = |w: usize| x.len().saturating_sub(t + w).min(8);
    // SAFETY: the caller's contract; masked loads read only the row's values.
    unsafe {
        if size_of::<T>() == 4 {
            let p = same::<T, f32>(x).as_ptr().add(t);
            let m = ((1u32 << (left(0) + left(8))) - 1) as __mmask16;
            _mm512_sub_ps(
                _mm512_maskz_loadu_ps(m, p),
                _mm512_loadu_ps(bp.shift.as_ptr().add(t)),
            )
        } else {
            let p = same::<T, f64>(x).as_ptr().add(t);
            let s = bp.shift64.as_ptr().add(t);
            let eight = |w: usize| {
                let m = ((1u32 << left(w)) - 1) as __mmask8;
                let v = _mm512_sub_pd(
                    _mm512_maskz_loadu_pd(m, p.add(w)),
                    _mm512_loadu_pd(s.add(w)),
                );
                _mm512_cvtpd_ps(v)
            };
            _mm512_insertf32x8::<1>(_mm512_castps256_ps512(eight(0)), eight(8))
        }
    }
}

/// The values of the copies `xb` (`n <= GROUP * P` rows of `dh` words, in blocks of
/// [`P`]) against every register of centres, chunk by chunk of at most four registers, into
/// `vals` (row `p` at `p * kp`), then `each(row, values)` for each row in order (as the
/// element-type kernel's `values` for one group).
///
/// # Safety
/// The CPU has AVX-512F and AVX-512 BF16; `vals` holds `GROUP * P * kp` values.
#[inline(always)]
unsafe fn values(
    (xb, dh, n): (&[u32], usize, usize),
    bp: &Packed,
    vals: &mut [f32],
    next: Option<(*const u8, usize)>,
    mut each: impl FnMut(usize, &[f32]),
) {
    debug_assert!(n <= GROUP * P);
    let kp = bp.kp;
    let blocks = n.div_ceil(P);
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
                let ahead = ahead.map(|(x, bytes)| (x.wrapping_add(first * bytes), bytes));
                match regs {
                    1 => chunk::<1>(xs, c, kp, nm, dh, o, ahead),
                    2 => chunk::<2>(xs, c, kp, nm, dh, o, ahead),
                    3 => chunk::<3>(xs, c, kp, nm, dh, o, ahead),
                    _ => chunk::<4>(xs, c, kp, nm, dh, o, ahead),
                }
            }
        }
        col += regs * 16;
    }
    for i in 0..n {
        each(i, &vals[i * kp..(i + 1) * kp]);
    }
}

/// The values of [`P`] rows against `B` registers of centres: `out[p * kp + l] =
/// norms[l] + sum_t xs[p][t] . c[t * kp + l]`, each term a pair of bfloat16 products;
/// with `ahead` (`P` rows of `bytes` bytes, not read), their lines asked for among the
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
    ahead: Option<(*const u8, usize)>,
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
            if let Some((x, bytes)) = ahead {
                // The rows' lines spread evenly over the `dh` steps.
                let lines = bytes.div_ceil(64);
                for j in t * lines / dh..(t + 1) * lines / dh {
                    for p in 0..P {
                        let line = x.wrapping_add(p * bytes + j * 64);
                        _mm_prefetch::<_MM_HINT_T0>(line.cast::<i8>());
                    }
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
