//! The register-blocked assignment kernel (the "fused" method of [`crate::assign`]): the
//! product values `e_j = |c_j|^2 - 2 x.c_j` of six or eight points at a time against every
//! centre, computed in the element type with fused multiply-adds straight from the points'
//! rows, then each point's label settled exactly as the product path settles it.
//!
//! The centres are packed once per step, coordinate-major and scaled by `-2`
//! ([`Centres::packed`]): per coordinate, one broadcast of each point's value and one fused
//! multiply-add per register of centres, the sums kept in registers (up to four registers of
//! centres for six points with AVX-512, two with AVX2), each accumulator starting from the
//! centres' norms. Each row of values then goes through a few vector instructions: its
//! smallest value `m`, and the lanes within the point's band `m + 2.1 err(x)`
//! ([`Centres::band_width`]). A lone lane is the label (no other centre can be nearer in
//! exact arithmetic); otherwise the lanes of the band, and only those, are compared with exact
//! [`dist2_f64`] distances, ties to the lower index. Rows of one register (up to 16 `f32` or
//! 8 `f64` centres) are settled a block of rows at a time, with the same tests. So the labels are the reference's, bit
//! for bit, as on the product path.
//!
//! Compared with a general matrix product (the `gemm` crate, [`crate::assign`]'s `Gemm`
//! method), nothing is packed but the centres, no tile of values leaves the L1 cache, and the
//! scan of a row costs a few instructions: what matters when `k` is small, where the products
//! of a point cost as little as its bookkeeping. It needs AVX2 and FMA
//! ([`crate::isa::has_avx2`]).
//!
//! **Files.** This one holds the entry points and what they share (the buffers, the settling
//! of a row); `x86.rs` the kernels, generic over a register of lanes (AVX-512 and AVX2);
//! `bf16.rs` the kernels' bfloat16 pass (AVX-512 BF16: two to four times the multiply-adds,
//! settled exactly); `narrow.rs` the kernels for up to eight centres with AVX-512 (the points
//! in the lanes, from rows packed once per fit; or row by row, the partial sums folded);
//! `tests.rs` and `leaf_tests.rs` their tests against the reference.

use crate::Element;
use crate::centres::{Centres, take};
use crate::lloyd::{StepStats, dist2_f64};

/// What a leaf reads beside its rows: their weights, their `|x|^2` when computed once per
/// fit, and the rows packed for the narrow kernel ([`narrow::pack_rows`]) when it serves.
pub(crate) type RowAids<'a, T> = (Option<&'a [f64]>, Option<&'a [f64]>, Option<&'a [T]>);

/// The most points per block of the kernel (rows of accumulators).
const P_MAX: usize = 8;
/// Blocks of rows per group: a group's rows go through one chunk of centres (up to four
/// registers wide) before the next chunk, so each chunk is read from the L2 cache once per
/// group rather than once per block.
const GROUP: usize = 4;

/// How far ahead the kernels that read the rows as they are (the row-wise one and the
/// general one) ask for them with a software prefetch, on data that streams
/// from memory ([`crate::centres::STREAMED_BYTES`]): 16 rows. The hardware prefetchers alone
/// leave those steps waiting on memory, most in `f64` (BENCHMARKS.md, clustering).
#[cfg(target_arch = "x86_64")]
const PREFETCH_ROWS: usize = 16;

/// Scratch space of the kernel.
#[derive(Default)]
pub(crate) struct Buffer<T> {
    /// Per row: `|x|^2`.
    xn2: Vec<f64>,
    /// Per row: its slot.
    slots: Vec<u32>,
    /// One block of rows of values.
    vals: Vec<T>,
    /// Per row: the band's width in the element type (infinite when a product may overflow).
    width: Vec<T>,
    /// Per row: twice the error bound, `2 err(x)`.
    err2: Vec<f64>,
    /// The bfloat16 pass (`bf16.rs`): a group of rows, shifted and rounded.
    xb: Vec<u32>,
    /// The bfloat16 pass: a group of rows of values.
    bvals: Vec<f32>,
    /// The bfloat16 pass: the group's band widths.
    bwidth: Vec<f32>,
}

/// The labels (storage slots) of every row of `x` (`d` wide, `xn2` their `|x|^2` in `f64`)
/// into `out`.
///
/// # Panics
/// Without AVX2 and FMA (the method is chosen only where the CPU has them).
pub(crate) fn nearest_rows<T: Element>(
    x: &[T],
    xn2: &[f64],
    cent: &Centres<T>,
    buf: &mut Buffer<T>,
    out: &mut [u32],
) {
    debug_assert_eq!(x.len(), out.len() * cent.d);
    buf.size(cent, out.len());
    #[cfg(target_arch = "x86_64")]
    {
        if crate::isa::has_avx512() {
            // SAFETY: the CPU has AVX-512 (F, VL, BW, DQ), AVX2, FMA, BMI2 and POPCNT; `buf`
            // is sized for the rows.
            unsafe {
                if !narrow::few_centres_avx512(x, xn2, None, cent, buf, out)
                    && !bf16::labels(x, cent, buf, out)
                {
                    x86::labels_avx512(x, xn2, cent, buf, out);
                }
            }
            return;
        }
        if crate::isa::has_avx2() {
            // SAFETY: the CPU has AVX2, FMA, BMI2 and POPCNT; `buf` is sized for the rows.
            unsafe {
                if !narrow::few_centres_avx2(x, xn2, None, cent, buf, out) {
                    x86::labels_avx2(x, xn2, cent, buf, out);
                }
            }
            return;
        }
    }
    panic!("the fused assignment kernel needs AVX2 and FMA");
}

/// The squared distances of the rows of `x` (`d` wide, `xn2` their `|x|^2` in `f64`) to every
/// centre of `cent` (storage order): `out[i * k + j] = max(0, |x_i|^2 + |c_j|^2 - 2 x_i.c_j)`
/// from the kernel's values, rounded to `f32` (for the draws of k-means++, which only need
/// their proportions).
///
/// # Panics
/// Without AVX2 and FMA (the method is chosen only where the CPU has them).
pub(crate) fn sq_distance_rows<T: Element>(
    x: &[T],
    xn2: &[f64],
    cent: &Centres<T>,
    buf: &mut Buffer<T>,
    out: &mut [f32],
) {
    debug_assert_eq!(x.len(), xn2.len() * cent.d);
    debug_assert_eq!(out.len(), xn2.len() * cent.k);
    buf.size(cent, xn2.len());
    #[cfg(target_arch = "x86_64")]
    {
        if crate::isa::has_avx512() {
            // SAFETY: the CPU has AVX-512 (F, VL, BW, DQ), AVX2, FMA, BMI2 and POPCNT; `buf`
            // is sized for the rows.
            unsafe { x86::distances_avx512(x, xn2, cent, buf, out) };
            return;
        }
        if crate::isa::has_avx2() {
            // SAFETY: the CPU has AVX2, FMA, BMI2 and POPCNT; `buf` is sized for the rows.
            unsafe { x86::distances_avx2(x, xn2, cent, buf, out) };
            return;
        }
    }
    panic!("the fused assignment kernel needs AVX2 and FMA");
}

/// One leaf of a Lloyd step with the fused kernel: the rows of `x` (`d` wide, with their
/// weights, their `|x|^2` when at hand, else computed here, and for a few centres their
/// packed blocks, which the narrow kernel then labels) labelled tile by tile (`labels` gets the caller's indices; `st.changed` counts
/// the changes), their weighted sums and weights added to `st` in row order, and with
/// `exact` their weighted exact squared distances to `st.inertia` ([`dist2_f64`], as the
/// direct path adds them), else `w |x|^2` to `q[label]` for the inertia formula. The sums add
/// `w x` in `f64` element by element, as every other path does, so they have the same bits.
///
/// # Panics
/// Without AVX2 and FMA (the method is chosen only where the CPU has them).
pub(crate) fn leaf<T: Element>(
    x: &[T],
    (weights, norms, packed): crate::fused::RowAids<'_, T>,
    cent: &Centres<T>,
    labels: &mut [u32],
    (st, q, exact): (&mut StepStats, &mut [f64], bool),
) {
    #[cfg(target_arch = "x86_64")]
    {
        if crate::isa::has_avx512() {
            // Packed rows serve the narrow kernel only (a few centres).
            let packed = packed.filter(|_| narrow::narrow(cent.k));
            // SAFETY: the CPU has AVX-512 (F, VL, BW, DQ), AVX2, FMA, BMI2 and POPCNT; the
            // packed blocks, when given, are the rows' ([`narrow::pack_rows`]).
            let rows = (weights, norms, packed);
            unsafe { x86::leaf_avx512(x, rows, cent, labels, (st, q, exact)) };
            return;
        }
        if crate::isa::has_avx2() {
            // SAFETY: the CPU has AVX2, FMA, BMI2 and POPCNT; no packed rows without AVX-512.
            unsafe { x86::leaf_avx2(x, (weights, norms, None), cent, labels, (st, q, exact)) };
            return;
        }
    }
    let _ = (x, weights, norms, packed, cent, labels, st, q, exact);
    panic!("the fused assignment kernel needs AVX2 and FMA");
}

/// Rows per tile of [`leaf`]: their values, labels and norms stay in the L1 and L2 caches.
const TILE: usize = 256;

impl<T: Element> Buffer<T> {
    /// Room for `rows` rows against `cent`; the band widths for whole blocks of 16 rows
    /// (the kernels for a few centres read a block's widths as one register).
    fn size(&mut self, cent: &Centres<T>, rows: usize) {
        self.vals.resize(GROUP * P_MAX * cent.kp, T::zero());
        self.width.resize(rows.next_multiple_of(16), T::zero());
        self.err2.resize(rows.next_multiple_of(16), 0.0);
        self.xn2.resize(rows, 0.0);
        self.slots.resize(rows, 0);
    }
}

/// Each row's band width and `2 err(x)` ([`Centres::err`]) into `buf`, from `|x|^2`: a width
/// of infinity where a partial sum of the row's products may overflow the element type
/// ([`Centres::products_finite`]), so that the row is settled by exact distances alone.
#[inline(always)]
fn band_widths<T: Element>(xn2: &[f64], cent: &Centres<T>, buf: &mut Buffer<T>) {
    let inf = T::from_f64(f64::INFINITY);
    for ((w, e2), &v) in buf.width.iter_mut().zip(buf.err2.iter_mut()).zip(xn2) {
        let err = cent.err(v);
        *e2 = 2.0 * err;
        *w = if cent.products_finite(v) {
            T::from_f64(2.1 * err)
        } else {
            inf
        };
    }
}

/// The label of one row from its values `vals` (`kp` of them, `|c_j|^2 - 2 x.c_j` in the
/// element type, or their shifted form in `f32` from the bfloat16 pass), given their smallest
/// `m` and the lanes at most `bar` (`count` of them, the first `first`; `few`, when it holds
/// all `count`, lists them) and `2 err(x)`: a lone lane within the band is the label, as the
/// product path's `single_nearest` decides; otherwise the lanes within the band are compared
/// exactly, or every centre when the values cannot be trusted (an infinite band: a partial
/// sum may have overflowed the element type, [`Centres::products_finite`]).
#[inline(always)]
fn settle_row<T: Element, V: Element>(
    x: &[T],
    cent: &Centres<T>,
    vals: &[V],
    (m, bar, err2): (V, V, f64),
    (count, first, few): (u32, u32, &[u32]),
) -> u32 {
    let (lead, limit) = (m.to_f64(), bar.to_f64());
    let mut best = (u32::MAX, f64::INFINITY);
    if limit.is_finite() {
        if count == 1 && limit > lead + err2 {
            return first;
        }
        if count >= 1 && limit >= lead + err2 {
            if few.len() == count as usize {
                for &j in few {
                    take(cent, j, dist2_f64(x, cent.row(j as usize)), &mut best);
                }
            } else {
                for (j, &v) in vals[..cent.k].iter().enumerate() {
                    if v <= bar {
                        take(cent, j as u32, dist2_f64(x, cent.row(j)), &mut best);
                    }
                }
            }
            return best.0;
        }
    }
    for j in 0..cent.k {
        take(cent, j as u32, dist2_f64(x, cent.row(j)), &mut best);
    }
    best.0
}

#[cfg(target_arch = "x86_64")]
mod bf16;
#[cfg(target_arch = "x86_64")]
pub(crate) mod narrow;
#[cfg(target_arch = "x86_64")]
mod x86;

#[cfg(test)]
mod leaf_tests;
#[cfg(test)]
mod tests;
