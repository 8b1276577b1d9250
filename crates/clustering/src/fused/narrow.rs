//! The fused kernels for a few centres, which spend less than one multiply-add per coordinate
//! of a point: the narrow one with AVX-512, the row-wise one with AVX-512 or AVX2.
//!
//! The general kernel puts the centres in the vector lanes, so with three centres it fills
//! three of sixteen `f32` lanes and spends one multiply-add per coordinate of every point
//! whatever `k` is, and then a horizontal minimum per point. Two kernels here do better:
//!
//! - **Narrow** (`k <=` [`NARROW_MAX_K`], rows packed once per fit): the points in the lanes.
//!   The rows of the data are kept transposed in blocks of one register of rows
//!   ([`pack_rows`]): per coordinate, one load of a block's values and one multiply-add per
//!   centre (its packed coefficient broadcast), so `k / W` multiply-adds per point and
//!   coordinate. A fit packs its rows only while the copy and the rows stay in the
//!   last-level cache (`NARROW_MAX_BYTES` in `cpu.rs`).
//! - **Row-wise** (`k <=` [`ROWWISE_MAX_K`], where [`rowwise`] says it pays): straight from
//!   the rows as they are, one multiply-add per centre and register of a row's coordinates
//!   into a register of partial sums, then the partial sums of a register of rows folded
//!   into one lane per row ([`Fold`]). Also `k / W` multiply-adds per point and coordinate,
//!   plus the folds, with no copy of the data: it serves data of any size.
//!
//! Both settle the minimum, the band and the lone lane for a whole block of points at once
//! with vector compares and a few bit operations ([`settle_block`]); the rows that need it
//! go through the same [`settle_row`] as the general kernel, so the labels are the
//! reference's, bit for bit. The general kernel's rows of one register of values (up to `W`
//! centres) are settled a block at a time here too ([`settle_rows`]).

use super::x86::{Lanes, Y32, Y64, Z32, Z64, by_element, labels_entry};
use super::{Buffer, PREFETCH_ROWS, band_widths, settle_row};
use crate::Element;
use crate::centres::Centres;
use std::any::TypeId;
use std::arch::x86_64::*;
use std::mem::MaybeUninit;

/// The most centres of the narrow kernel: up to eight, the lanes' labels fit three bits.
pub(crate) const NARROW_MAX_K: usize = 8;

/// Rows per packed block for the element type `T`: one 64-byte register of them.
pub(crate) fn pack_width<T>() -> usize {
    64 / size_of::<T>()
}

/// Whether the narrow kernel serves `k` centres on this CPU (AVX-512).
pub(crate) fn narrow(k: usize) -> bool {
    k <= NARROW_MAX_K && crate::isa::has_avx512()
}

/// The rows of `data` (`d` wide) transposed in blocks of [`pack_width`] rows: value `u` of
/// row `b * W + l` at `(b * d + u) * W + l`; the last block's missing rows are zeros (their
/// lanes are never read back).
pub(crate) fn pack_rows<T: Element>(data: &[T], d: usize) -> Vec<T> {
    use rayon::prelude::*;
    let w = pack_width::<T>();
    let n = data.len() / d;
    let mut out = vec![T::zero(); n.div_ceil(w) * w * d];
    // 64 blocks a task: enough work to share among threads, little to split.
    data.par_chunks(64 * w * d)
        .zip(out.par_chunks_mut(64 * w * d))
        .for_each(|(src, dst)| {
            for (rows, dst) in src.chunks(w * d).zip(dst.chunks_exact_mut(w * d)) {
                for (l, row) in rows.chunks_exact(d).enumerate() {
                    for (u, &v) in row.iter().enumerate() {
                        dst[u * w + l] = v;
                    }
                }
            }
        });
    out
}

labels_entry!(
    /// The labels (storage slots) of the rows of `x` (`xn2` their `|x|^2`), whose packed blocks
    /// ([`pack_rows`]) start at `packed`, into `out`.
    ///
    /// # Safety
    /// The CPU has AVX-512 (F, VL, BW, DQ), AVX2, FMA, BMI2 and POPCNT; `cent.k <=`
    /// [`NARROW_MAX_K`]; `packed` holds the blocks of every row of `out`; `buf` is sized for
    /// `out.len()` rows.
    labels_narrow_avx512, "avx512f,avx512vl,avx512bw,avx512dq,avx2,fma,bmi1,bmi2,popcnt",
    Z32, Z64, [packed: &[T]], |x, xn2, cent, buf, out| by_k::<T, V, U>(x, packed, cent, buf, out)
);

/// Every block of the rows with the centre count a constant: `B` blocks at a time while that
/// many remain (enough to keep eight sums in flight), then one.
///
/// # Safety
/// As [`labels_narrow_avx512`]; `U` is `T`.
#[inline(always)]
unsafe fn by_k<T: Element, V: Settle<U>, U: Element>(
    x: &[T],
    packed: &[T],
    cent: &Centres<T>,
    buf: &Buffer<T>,
    out: &mut [u32],
) {
    let nblocks = out.len().div_ceil(V::W);
    // SAFETY: the caller's contract; each constant is the centre count it names; `b + B` or
    // `b + 1` blocks exist.
    unsafe {
        by_centres! { cent.k, |K, B| {
            let mut b = 0;
            while b + B <= nblocks {
                group::<T, V, U, K, B>(x, packed, cent, buf, out, b);
                b += B;
            }
            while b < nblocks {
                group::<T, V, U, K, 1>(x, packed, cent, buf, out, b);
                b += 1;
            }
        }, [1 8, 2 4, 3 3, 4 2, 5 2, 6 1, 7 1, 8 1] }
    }
}

/// `$call` with the constant `$k` the centre count `$count` (1 to 8) and `$x` the constant
/// paired with it in the list.
macro_rules! by_centres {
    ($count:expr, |$k:ident, $x:ident| $call:expr, [$($kv:literal $xv:literal),*]) => {
        match $count {
            $($kv => {
                const $k: usize = $kv;
                const $x: usize = $xv;
                $call
            })*
            k => unreachable!("the kernels for a few centres serve 1 to 8, not {k}"),
        }
    };
}
use by_centres;

/// Blocks `b0..b0 + B` of the rows: the values of their rows against the `K` centres, then
/// each row's label.
///
/// # Safety
/// As [`by_k`]; `cent.k == K`; blocks `b0..b0 + B` hold rows of `out` (the last possibly in
/// part).
#[inline(always)]
unsafe fn group<T: Element, V: Settle<U>, U: Element, const K: usize, const B: usize>(
    x: &[T],
    packed: &[T],
    cent: &Centres<T>,
    buf: &Buffer<T>,
    out: &mut [u32],
    b0: usize,
) {
    let (d, kp, w) = (cent.d, cent.kp, V::W);
    debug_assert_eq!(
        w,
        pack_width::<U>(),
        "a packed block is one register of rows"
    );
    let cu: &[U] = super::x86::same(&cent.packed);
    let nu: &[U] = super::x86::same(&cent.packed_norms);
    let pu: &[U] = super::x86::same(packed);
    debug_assert!(pu.len() >= (b0 + B) * d * w && cu.len() >= d * kp);
    // SAFETY: in bounds by the caller's contract (checked in debug builds).
    let acc = unsafe {
        // Plain loops, as in `rowwise_blocks`.
        let mut norms = [V::splat(U::zero()); K];
        for (j, v) in norms.iter_mut().enumerate() {
            *v = V::bcast(nu.as_ptr().add(j));
        }
        let mut acc: [[V; K]; B] = [norms; B];
        let base = pu.as_ptr().add(b0 * d * w);
        let mut cv = norms;
        for u in 0..d {
            let row = cu.as_ptr().add(u * kp);
            for (j, v) in cv.iter_mut().enumerate() {
                *v = V::bcast(row.add(j));
            }
            for (b, a) in acc.iter_mut().enumerate() {
                let xv = V::load(base.add((b * d + u) * w));
                for (a, c) in a.iter_mut().zip(&cv) {
                    *a = V::fma(xv, *c, *a);
                }
            }
        }
        acc
    };
    for (b, e) in acc.iter().enumerate() {
        // SAFETY: the caller's contract: block `b0 + b` holds rows of `out`.
        unsafe { settle_block::<T, V, U, K>(x, cent, e, buf, out, (b0 + b) * w) };
    }
}

/// The labels of the rows of the block starting at row `r0` from their values `e` (`e[j]`
/// against slot `j`, one lane per row): the smallest value `m` of each lane, the centres
/// within its band `m + width`, and the lone one where the band holds one and clears the
/// error bound, as the general kernel decides; [`settle_row`] for the others.
///
/// # Safety
/// `V`'s CPU features are present; `U` is `T`; `r0 < out.len()`; `buf` holds the widths of
/// the whole block (sized in whole blocks).
#[inline(always)]
unsafe fn settle_block<T: Element, V: Settle<U>, U: Element, const K: usize>(
    x: &[T],
    cent: &Centres<T>,
    e: &[V; K],
    buf: &Buffer<T>,
    out: &mut [u32],
    r0: usize,
) {
    let rows = (out.len() - r0).min(V::W);
    let (widths, err2): (&[U], _) = (super::x86::same(&buf.width), &buf.err2);
    debug_assert!(widths.len() >= r0 + V::W && err2.len() >= r0 + V::W);
    // SAFETY: the caller's contract; the arrays hold 16 >= `w` lanes; `widths` and `err2`
    // are sized in whole blocks of 16 rows.
    unsafe {
        let mut m = e[0];
        for v in &e[1..] {
            m = V::min(m, *v);
        }
        let bar = V::add(m, V::load(widths[r0..].as_ptr()));
        // Per lane: whether one or several centres are within the band, and the three bits
        // of the first such centre's slot (exact for a lane with one).
        let (mut seen, mut multi, mut bits) = (0u32, 0u32, [0u32; 3]);
        let mut masks = [0u32; K];
        for (j, v) in e.iter().enumerate() {
            let mk = v.le(bar);
            masks[j] = mk;
            multi |= seen & mk;
            seen |= mk;
            for (t, b) in bits.iter_mut().enumerate() {
                if j >> t & 1 == 1 {
                    *b |= mk;
                }
            }
        }
        // The lanes whose lone centre is the label: the band holds one centre and clears the
        // error bound (`settle_row`'s first test, for the whole block at once).
        let block = (1u32 << rows) - 1;
        let trusted = seen & !multi & V::trusted(m, bar, err2[r0..].as_ptr()) & block;
        if rows == V::W {
            // Every lane's bits, the others' overwritten below.
            V::store_labels(out[r0..].as_mut_ptr(), bits);
        } else {
            let mut t = trusted;
            while t != 0 {
                let l = t.trailing_zeros() as usize;
                t &= t - 1;
                out[r0 + l] =
                    (bits[0] >> l & 1) | (bits[1] >> l & 1) << 1 | (bits[2] >> l & 1) << 2;
            }
        }
        let mut rest = block & !trusted;
        if rest == 0 {
            return;
        }
        // The general kernel's settling, from each remaining lane's values.
        let mut ms = [U::zero(); 16];
        let mut bs = [U::zero(); 16];
        m.store(ms.as_mut_ptr());
        bar.store(bs.as_mut_ptr());
        let lanes: [[U; 16]; K] = std::array::from_fn(|j| {
            let mut v = [U::zero(); 16];
            e[j].store(v.as_mut_ptr());
            v
        });
        while rest != 0 {
            let l = rest.trailing_zeros() as usize;
            rest &= rest - 1;
            let i = r0 + l;
            let vals: [U; K] = std::array::from_fn(|j| lanes[j][l]);
            let count = masks.iter().map(|mk| mk >> l & 1).sum::<u32>();
            let first = masks
                .iter()
                .position(|mk| mk >> l & 1 == 1)
                .map_or(u32::MAX, |j| j as u32);
            out[i] = settle_row(
                &x[i * cent.d..(i + 1) * cent.d],
                cent,
                super::x86::same(&vals),
                (
                    T::from_f64(ms[l].to_f64()),
                    T::from_f64(bs[l].to_f64()),
                    err2[i],
                ),
                (count, first, &[]),
            );
        }
    }
}

/// The labels of the rows whose values are one register each (the general kernel's for up to
/// `W` centres: row `r` of `vals` at `r * W`, `|c_j|^2 - 2 x.c_j` in lane `j`, the padding
/// lanes infinite), a block of `W` rows at a time: their smallest values folded into one
/// register ([`Fold::fold_min`], a lane per row), the bands and the error bound's test for
/// the whole block ([`Settle::trusted`]), then per row one compare against its band for the
/// lanes within it. A lone lane that clears the bound is the label, as [`settle_row`]'s
/// first test decides; the other rows go through [`settle_row`]. `x`, `widths` and `err2`
/// start at the first row of `vals` and `out`; `widths` and `err2` hold whole blocks. Rows of
/// two registers or more stay with [`settle_row`]: reducing each to one register by lane-wise
/// minima first costs what the block's shared test saves.
///
/// # Safety
/// `V`'s CPU features are present; `U` is `T`; `cent.kp == W`; `vals` holds `out.len()` rows
/// of `W` values.
#[inline(always)]
pub(super) unsafe fn settle_rows<T: Element, V: Fold<U>, U: Element>(
    x: &[T],
    cent: &Centres<T>,
    vals: &[U],
    widths: &[U],
    err2: &[f64],
    out: &mut [u32],
) {
    let (w, d, n) = (V::W, cent.d, out.len());
    debug_assert!(vals.len() >= n * w && widths.len() >= n.next_multiple_of(w));
    debug_assert!(err2.len() >= n.next_multiple_of(w) && cent.kp == w);
    // SAFETY: the caller's contract; every load is within its slice (rows past the last
    // repeat it; `widths` and `err2` hold whole blocks).
    unsafe {
        for r0 in (0..n).step_by(w) {
            let rows = (n - r0).min(w);
            let mut regs = [V::splat(U::zero()); 16];
            for (l, v) in regs.iter_mut().take(w).enumerate() {
                *v = V::load(vals.as_ptr().add((r0 + l.min(rows - 1)) * w));
            }
            let (mut m, mut g) = (w, w);
            while m > 1 {
                for i in 0..m / 2 {
                    regs[i] = V::fold_min(regs[2 * i], regs[2 * i + 1], g);
                }
                m /= 2;
                g /= 2;
            }
            let lead = regs[0];
            let bar = V::add(lead, V::load(widths.as_ptr().add(r0)));
            let trusted = V::trusted(lead, bar, err2.as_ptr().add(r0));
            let (mut ms, mut bs) = ([U::zero(); 16], [U::zero(); 16]);
            lead.store(ms.as_mut_ptr());
            bar.store(bs.as_mut_ptr());
            for l in 0..rows {
                let i = r0 + l;
                let row = &vals[i * w..(i + 1) * w];
                let within = V::load(row.as_ptr()).le(V::bcast(bs.as_ptr().add(l)));
                let first = if within == 0 {
                    u32::MAX
                } else {
                    within.trailing_zeros()
                };
                if within.count_ones() == 1 && trusted >> l & 1 == 1 {
                    out[i] = first;
                    continue;
                }
                out[i] = settle_row(
                    &x[i * d..(i + 1) * d],
                    cent,
                    row,
                    (ms[l], bs[l], err2[i]),
                    (within.count_ones(), first, &[]),
                );
            }
        }
    }
}

/// Registers of values whose block of rows [`settle_block`] settles at once.
///
/// # Safety
/// As [`Lanes`]: AVX-512F (and VL, DQ) for the 512-bit registers, AVX2 for the 256-bit ones.
pub(super) trait Settle<T>: Lanes<T> {
    /// Bit `l` set when lane `l` of `bar` is finite and, in `f64`, above lane `l` of `m` plus
    /// `err2[l]`: the error bound that a lone centre within the band must clear
    /// ([`settle_row`]'s test, computed as it computes it). Reads `W` values at `err2`.
    unsafe fn trusted(m: Self, bar: Self, err2: *const f64) -> u32;
    /// Writes `W` labels at `out`, lane `l`'s bit `t` from bit `l` of `bits[t]`.
    unsafe fn store_labels(out: *mut u32, bits: [u32; 3]);
}

/// [`Settle::trusted`] for a register of `f32` from its two halves widened to the `f64`
/// register `$wide` (`$cvt` of the low half `$lo(v)` and of the high half `$hi(v)`, `$n` lanes
/// each): widening is exact (infinities and NaNs included), so each half's test is the `f64`
/// register's. No closures here or in the other register code: a closure that is not inlined
/// runs without the kernel's CPU features, and each intrinsic in it becomes a call.
macro_rules! trusted_by_halves {
    ($wide:ident, $cvt:ident, |$v:ident| $lo:expr, $hi:expr, $n:literal) => {
        #[inline(always)]
        unsafe fn trusted(m: Self, bar: Self, err2: *const f64) -> u32 {
            // SAFETY: the trait's contract.
            unsafe {
                let $v = m.0;
                let (lo_m, hi_m) = ($wide($cvt($lo)), $wide($cvt($hi)));
                let $v = bar.0;
                let (lo_bar, hi_bar) = ($wide($cvt($lo)), $wide($cvt($hi)));
                $wide::trusted(lo_m, lo_bar, err2)
                    | $wide::trusted(hi_m, hi_bar, err2.add($n)) << $n
            }
        }
    };
}

impl Settle<f32> for Z32 {
    trusted_by_halves!(
        Z64,
        _mm512_cvtps_pd,
        |v| _mm512_castps512_ps256(v),
        _mm512_extractf32x8_ps::<1>(v),
        8
    );
    #[inline(always)]
    unsafe fn store_labels(out: *mut u32, bits: [u32; 3]) {
        // SAFETY: the trait's contract.
        unsafe {
            let v = _mm512_or_si512(
                _mm512_or_si512(
                    _mm512_maskz_set1_epi32(bits[0] as u16, 1),
                    _mm512_maskz_set1_epi32(bits[1] as u16, 2),
                ),
                _mm512_maskz_set1_epi32(bits[2] as u16, 4),
            );
            _mm512_storeu_si512(out.cast(), v);
        }
    }
}

impl Settle<f64> for Z64 {
    #[inline(always)]
    unsafe fn trusted(m: Self, bar: Self, err2: *const f64) -> u32 {
        // SAFETY: the trait's contract.
        unsafe {
            let lead = _mm512_add_pd(m.0, _mm512_loadu_pd(err2));
            let above = _mm512_cmp_pd_mask::<_CMP_GT_OQ>(bar.0, lead);
            let finite = _mm512_cmp_pd_mask::<_CMP_LT_OQ>(
                _mm512_abs_pd(bar.0),
                _mm512_set1_pd(f64::INFINITY),
            );
            u32::from(above & finite)
        }
    }
    #[inline(always)]
    unsafe fn store_labels(out: *mut u32, bits: [u32; 3]) {
        // SAFETY: the trait's contract.
        unsafe {
            let v = _mm256_or_si256(
                _mm256_or_si256(
                    _mm256_maskz_set1_epi32(bits[0] as u8, 1),
                    _mm256_maskz_set1_epi32(bits[1] as u8, 2),
                ),
                _mm256_maskz_set1_epi32(bits[2] as u8, 4),
            );
            _mm256_storeu_si256(out.cast(), v);
        }
    }
}

/// Lane `l` of the result is bit `l` of `bits`, shifted left by `t` (AVX2: no mask registers).
#[inline(always)]
unsafe fn bit_lanes8(bits: u32, t: i32) -> __m256i {
    // SAFETY: the callers run with AVX2.
    unsafe {
        let v = _mm256_srlv_epi32(
            _mm256_set1_epi32(bits as i32),
            _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7),
        );
        _mm256_sll_epi32(
            _mm256_and_si256(v, _mm256_set1_epi32(1)),
            _mm_cvtsi32_si128(t),
        )
    }
}

impl Settle<f32> for Y32 {
    trusted_by_halves!(
        Y64,
        _mm256_cvtps_pd,
        |v| _mm256_castps256_ps128(v),
        _mm256_extractf128_ps::<1>(v),
        4
    );
    #[inline(always)]
    unsafe fn store_labels(out: *mut u32, bits: [u32; 3]) {
        // SAFETY: the trait's contract.
        unsafe {
            let v = _mm256_or_si256(
                _mm256_or_si256(bit_lanes8(bits[0], 0), bit_lanes8(bits[1], 1)),
                bit_lanes8(bits[2], 2),
            );
            _mm256_storeu_si256(out.cast(), v);
        }
    }
}

impl Settle<f64> for Y64 {
    #[inline(always)]
    unsafe fn trusted(m: Self, bar: Self, err2: *const f64) -> u32 {
        // SAFETY: the trait's contract.
        unsafe {
            let lead = _mm256_add_pd(m.0, _mm256_loadu_pd(err2));
            let above = _mm256_movemask_pd(_mm256_cmp_pd::<_CMP_GT_OQ>(bar.0, lead)) as u32;
            let abs = _mm256_andnot_pd(_mm256_set1_pd(-0.0), bar.0);
            let finite = _mm256_movemask_pd(_mm256_cmp_pd::<_CMP_LT_OQ>(
                abs,
                _mm256_set1_pd(f64::INFINITY),
            )) as u32;
            above & finite
        }
    }
    #[inline(always)]
    unsafe fn store_labels(out: *mut u32, bits: [u32; 3]) {
        // SAFETY: the trait's contract.
        unsafe {
            let v = _mm256_or_si256(
                _mm256_or_si256(bit_lanes8(bits[0], 0), bit_lanes8(bits[1], 1)),
                bit_lanes8(bits[2], 2),
            );
            _mm_storeu_si128(out.cast(), _mm256_castsi256_si128(v));
        }
    }
}

/// The most centres of the row-wise kernel ([`labels_rowwise_avx512`]), and its register width
/// on this CPU, kept beside the centres' row copy it reads.
pub(crate) use crate::centres::{ROWWISE_MAX_K, rowwise_width};

/// Whether the row-wise kernel serves `k` centres in `d` dimensions of `T` on this CPU, and
/// pays: it spends about `k (d / W + 3)` vector instructions a row (`W` lanes a register: a
/// multiply-add per centre and register of coordinates, and the folds) and settles a
/// block of rows at once ([`settle_block`]); the general kernel spends `d` (a multiply-add
/// per coordinate into one register of up to `W` centres) and settles each row on its own,
/// about eight more. It runs where its count is at most the general kernel's, `d + 8`: the
/// crossover measured with AVX-512 and AVX2, `f32` and `f64` (BENCHMARKS.md, clustering,
/// "Few centres, row-wise").
pub(crate) fn rowwise<T>(k: usize, d: usize) -> bool {
    let Some(w) = rowwise_width::<T>() else {
        return false;
    };
    k <= ROWWISE_MAX_K && k * (d.div_ceil(w) + 3) <= d + 8
}

/// Registers whose rows fold: the reduction of the row-wise kernel.
///
/// # Safety
/// As [`Lanes`]: AVX-512F for the 512-bit registers, AVX2 for the 256-bit ones; `load_first`
/// reads `n <= W` values.
pub(super) trait Fold<T>: Settle<T> {
    /// The first `n` lanes from `p`, the other lanes zero.
    unsafe fn load_first(p: *const T, n: usize) -> Self;
    /// Two registers of rows of `g` lanes each (`W / g` rows in each) as one register of
    /// twice the rows, `g / 2` lanes each: lane `o` of row `r` is the sum of lanes `o` and
    /// `o + g / 2` of input row `r`, `a`'s rows first.
    unsafe fn fold(a: Self, b: Self, g: usize) -> Self;
    /// [`Fold::fold`] with the smaller of the two lanes rather than their sum.
    unsafe fn fold_min(a: Self, b: Self, g: usize) -> Self;
}

/// The lanes that [`Fold::fold`] takes (the low halves, `off = 0`, or the high ones,
/// `off = g / 2`) from the concatenation of two registers of `w` lanes, rows of `g` lanes.
const fn fold_index<const W: usize>(g: usize, off: usize) -> [i64; W] {
    let mut idx = [0i64; W];
    let (h, rows_in) = (g / 2, W / g);
    let mut l = 0;
    while l < W {
        let (r, o) = (l / h, l % h);
        let src = if r < rows_in {
            r * g + o + off
        } else {
            W + (r - rows_in) * g + o + off
        };
        idx[l] = src as i64;
        l += 1;
    }
    idx
}

/// The lanes of [`fold_index`] as the 32-bit indices of a permute of 16 lanes.
const fn fold_index32(g: usize, off: usize) -> [i32; 16] {
    let wide = fold_index::<16>(g, off);
    let mut idx = [0i32; 16];
    let mut l = 0;
    while l < 16 {
        idx[l] = wide[l] as i32;
        l += 1;
    }
    idx
}

/// Implements [`Fold`] for the register type `$name` of `$t`: `load_first` is `$load` (the
/// first `$n` lanes from `$p`), `fold` is `$fold` (of the registers' vectors `$a` and `$b`,
/// rows of `$g` lanes).
macro_rules! fold_impl {
    ($name:ident, $t:ty, |$p:ident, $n:ident| $load:expr,
     |$a:ident, $b:ident, $g:ident| $fold:expr, $fold_min:expr) => {
        impl Fold<$t> for $name {
            #[inline(always)]
            unsafe fn load_first($p: *const $t, $n: usize) -> Self {
                // SAFETY: the trait's contract: `n <= W` values at `p`; the other lanes are not
                // read.
                unsafe { $name($load) }
            }
            #[inline(always)]
            unsafe fn fold(a: Self, b: Self, $g: usize) -> Self {
                let ($a, $b) = (a.0, b.0);
                // SAFETY: the trait's contract (AVX-512F for the 512-bit registers, AVX2 for
                // the 256-bit ones).
                unsafe { $name($fold) }
            }
            #[inline(always)]
            unsafe fn fold_min(a: Self, b: Self, $g: usize) -> Self {
                let ($a, $b) = (a.0, b.0);
                // SAFETY: as `fold`.
                unsafe { $name($fold_min) }
            }
        }
    };
}

/// [`fold_impl`] for a 512-bit register: the masked load of `$maskz`, and the fold as two
/// permutes `$perm` of both registers by the lane indices `$lo` and `$hi` (constants per `g`
/// once inlined) added by `$add`.
macro_rules! fold_lanes {
    ($name:ident, $t:ty, $w:expr, $mask:ty, $maskz:ident, $perm:ident, $add:ident, $min:ident,
     |$g:ident| $lo:expr, $hi:expr) => {
        fold_impl!(
            $name,
            $t,
            |p, n| $maskz((((1u32 << n) - 1) & ((1u32 << $w) - 1)) as $mask, p),
            |a, b, $g| {
                let (lo, hi) = ($lo, $hi);
                let lo = _mm512_loadu_si512(lo.as_ptr().cast());
                let hi = _mm512_loadu_si512(hi.as_ptr().cast());
                $add($perm(a, lo, b), $perm(a, hi, b))
            },
            {
                let (lo, hi) = ($lo, $hi);
                let lo = _mm512_loadu_si512(lo.as_ptr().cast());
                let hi = _mm512_loadu_si512(hi.as_ptr().cast());
                $min($perm(a, lo, b), $perm(a, hi, b))
            }
        );
    };
}

fold_lanes!(
    Z32,
    f32,
    16,
    u16,
    _mm512_maskz_loadu_ps,
    _mm512_permutex2var_ps,
    _mm512_add_ps,
    _mm512_min_ps,
    |g| match g {
        16 => const { fold_index32(16, 0) },
        8 => const { fold_index32(8, 0) },
        4 => const { fold_index32(4, 0) },
        _ => const { fold_index32(2, 0) },
    },
    match g {
        16 => const { fold_index32(16, 8) },
        8 => const { fold_index32(8, 4) },
        4 => const { fold_index32(4, 2) },
        _ => const { fold_index32(2, 1) },
    }
);
fold_lanes!(
    Z64,
    f64,
    8,
    u8,
    _mm512_maskz_loadu_pd,
    _mm512_permutex2var_pd,
    _mm512_add_pd,
    _mm512_min_pd,
    |g| match g {
        8 => const { fold_index::<8>(8, 0) },
        4 => const { fold_index::<8>(4, 0) },
        _ => const { fold_index::<8>(2, 0) },
    },
    match g {
        8 => const { fold_index::<8>(8, 4) },
        4 => const { fold_index::<8>(4, 2) },
        _ => const { fold_index::<8>(2, 1) },
    }
);

/// The first `n` of `W` lanes set (all bits) for AVX2's masked loads: lanes `16 - n..` of
/// this table.
const FIRST_LANES: [i32; 32] = {
    let mut t = [0i32; 32];
    let mut i = 8;
    while i < 16 {
        t[i] = -1;
        i += 1;
    }
    t
};

// AVX2: lanes `o` and `o + g / 2` of each row are added, `a`'s rows first: whole halves for
// rows of a whole register, pairs of lanes (within each 128-bit half, then the 64-bit quarters
// put in row order) for shorter rows.
fold_impl!(
    Y32,
    f32,
    |p, n| _mm256_maskload_ps(
        p,
        _mm256_loadu_si256(FIRST_LANES.as_ptr().add(16 - n).cast())
    ),
    |a, b, g| match g {
        8 => _mm256_add_ps(
            _mm256_permute2f128_ps::<0x20>(a, b),
            _mm256_permute2f128_ps::<0x31>(a, b)
        ),
        4 => {
            let s = _mm256_add_ps(
                _mm256_shuffle_ps::<0x44>(a, b),
                _mm256_shuffle_ps::<0xEE>(a, b),
            );
            _mm256_castpd_ps(_mm256_permute4x64_pd::<0xD8>(_mm256_castps_pd(s)))
        }
        _ => {
            let s = _mm256_hadd_ps(a, b);
            _mm256_castpd_ps(_mm256_permute4x64_pd::<0xD8>(_mm256_castps_pd(s)))
        }
    },
    match g {
        8 => _mm256_min_ps(
            _mm256_permute2f128_ps::<0x20>(a, b),
            _mm256_permute2f128_ps::<0x31>(a, b)
        ),
        4 => {
            let s = _mm256_min_ps(
                _mm256_shuffle_ps::<0x44>(a, b),
                _mm256_shuffle_ps::<0xEE>(a, b),
            );
            _mm256_castpd_ps(_mm256_permute4x64_pd::<0xD8>(_mm256_castps_pd(s)))
        }
        _ => {
            // The even and the odd lanes, in `hadd`'s order.
            let s = _mm256_min_ps(
                _mm256_shuffle_ps::<0x88>(a, b),
                _mm256_shuffle_ps::<0xDD>(a, b),
            );
            _mm256_castpd_ps(_mm256_permute4x64_pd::<0xD8>(_mm256_castps_pd(s)))
        }
    }
);
fold_impl!(
    Y64,
    f64,
    |p, n| _mm256_maskload_pd(
        p,
        _mm256_cvtepi32_epi64(_mm_loadu_si128(FIRST_LANES.as_ptr().add(16 - n).cast()))
    ),
    |a, b, g| match g {
        4 => _mm256_add_pd(
            _mm256_permute2f128_pd::<0x20>(a, b),
            _mm256_permute2f128_pd::<0x31>(a, b)
        ),
        _ => _mm256_permute4x64_pd::<0xD8>(_mm256_hadd_pd(a, b)),
    },
    match g {
        4 => _mm256_min_pd(
            _mm256_permute2f128_pd::<0x20>(a, b),
            _mm256_permute2f128_pd::<0x31>(a, b)
        ),
        _ => _mm256_permute4x64_pd::<0xD8>(_mm256_min_pd(
            _mm256_unpacklo_pd(a, b),
            _mm256_unpackhi_pd(a, b)
        )),
    }
);

/// Declares the entry of one instruction set for a few centres, `unsafe fn $name<T>(x, xn2,
/// packed, cent, buf, out) -> bool`: `$narrow` with the packed rows when given, else
/// `$rowwise` where [`rowwise`] says it pays; `false` when neither labelled the rows.
macro_rules! few_centres {
    ($(#[$m:meta])* $name:ident, $feat:literal, $rowwise:ident,
     |$x:ident, $xn2:ident, $p:pat, $cent:ident, $buf:ident, $out:ident| $narrow:expr) => {
        $(#[$m])*
        #[target_feature(enable = $feat)]
        pub(super) unsafe fn $name<T: Element>(
            $x: &[T],
            $xn2: &[f64],
            packed: Option<&[T]>,
            $cent: &Centres<T>,
            $buf: &mut Buffer<T>,
            $out: &mut [u32],
        ) -> bool {
            match packed {
                Some($p) => $narrow,
                // SAFETY: the CPU has the features; `k` is within the kernel's.
                None if rowwise::<T>($cent.k, $cent.d) => unsafe {
                    $rowwise($x, $xn2, $cent, $buf, $out)
                },
                None => return false,
            }
            true
        }
    };
}

few_centres!(
    /// Labels the rows with a kernel for a few centres when one serves: the narrow kernel from
    /// the packed rows when given, else the row-wise kernel where [`rowwise`] says it pays.
    /// Returns whether it labelled them (else the general kernel is the caller's).
    ///
    /// # Safety
    /// As [`labels_narrow_avx512`] when `packed` is given; else the CPU has the features
    /// enabled here.
    few_centres_avx512, "avx512f,avx512vl,avx512bw,avx512dq,avx2,fma,bmi1,bmi2,popcnt",
    labels_rowwise_avx512,
    // SAFETY: the caller's contract.
    |x, xn2, p, cent, buf, out| unsafe { labels_narrow_avx512(x, xn2, p, cent, buf, out) }
);

labels_entry!(
    /// The labels (storage slots) of the rows of `x` (`xn2` their `|x|^2`) into `out`, for a
    /// few centres, straight from the rows: per row and centre, one multiply-add per register
    /// of coordinates into a register of partial sums, then the partial sums of a register of
    /// rows folded into one register of values, one lane per row ([`Fold::fold`]: two
    /// permutes and an add per pair of registers), and the labels settled a block at a time as
    /// the narrow kernel settles them. The values are `|c_j|^2 - 2 x.c_j` summed in another
    /// order than the other kernels', which [`Centres::err`] covers: the labels are the
    /// reference's, bit for bit.
    ///
    /// # Safety
    /// The CPU has AVX-512 (F, VL, BW, DQ), AVX2, FMA, BMI2 and POPCNT; `cent` is fused with
    /// `k <=` [`ROWWISE_MAX_K`] (so `cent.rows` holds its rows); `buf` is sized for `out.len()`
    /// rows.
    labels_rowwise_avx512, "avx512f,avx512vl,avx512bw,avx512dq,avx2,fma,bmi1,bmi2,popcnt",
    Z32, Z64, [], |x, xn2, cent, buf, out| rowwise_by_k::<T, V, U>(x, cent, buf, out)
);

few_centres!(
    /// [`few_centres_avx512`] with AVX2 registers: the row-wise kernel where [`rowwise`] says it
    /// pays (there is no narrow kernel, so no packed rows, without AVX-512).
    ///
    /// # Safety
    /// The CPU has AVX2, FMA, BMI2 and POPCNT; `packed` is `None`.
    few_centres_avx2, "avx2,fma,bmi1,bmi2,popcnt", labels_rowwise_avx2,
    |x, xn2, _, cent, buf, out| panic!("rows packed for the narrow kernel without AVX-512")
);

labels_entry!(
    /// [`labels_rowwise_avx512`] with AVX2 registers (8 `f32` or 4 `f64` lanes).
    ///
    /// # Safety
    /// The CPU has AVX2, FMA, BMI2 and POPCNT; `cent` is fused with `k <=` [`ROWWISE_MAX_K`];
    /// `buf` is sized for `out.len()` rows.
    labels_rowwise_avx2, "avx2,fma,bmi1,bmi2,popcnt", Y32, Y64,
    [], |x, xn2, cent, buf, out| rowwise_by_k::<T, V, U>(x, cent, buf, out)
);

/// [`rowwise_blocks`] with the centre count a constant.
///
/// # Safety
/// As [`labels_rowwise_avx512`]; `U` is `T`.
#[inline(always)]
unsafe fn rowwise_by_k<T: Element, V: Fold<U>, U: Element>(
    x: &[T],
    cent: &Centres<T>,
    buf: &Buffer<T>,
    out: &mut [u32],
) {
    // SAFETY: the caller's contract; each constant is the centre count it names.
    unsafe {
        by_centres! { cent.k, |K, R| rowwise_blocks::<T, V, U, K, R>(x, cent, buf, out),
        [1 4, 2 4, 3 4, 4 4, 5 2, 6 2, 7 2, 8 2] }
    }
}

/// Every block of one register of rows: its groups of `R` rows (four up to four centres, two
/// up to eight: the `R K` partial sums stay in registers) against the `K` centres, folded
/// to one lane per row, then the block's labels ([`settle_block`]).
///
/// # Safety
/// As [`rowwise_by_k`]; `cent.k == K`; `R` is 2 or 4.
#[inline(always)]
unsafe fn rowwise_blocks<T: Element, V: Fold<U>, U: Element, const K: usize, const R: usize>(
    x: &[T],
    cent: &Centres<T>,
    buf: &Buffer<T>,
    out: &mut [u32],
) {
    let (d, w, n) = (cent.d, V::W, out.len());
    let (full, tail) = (d / w, d % w);
    // The rows' stride: whole registers of the widest vectors the CPU has, so a multiple of
    // `w` (AVX2 reads the rows padded for AVX-512 too).
    let dp = cent.rows.len() / K;
    debug_assert!(dp >= d.next_multiple_of(w) && dp.is_multiple_of(w));
    let (xu, cu): (&[U], &[U]) = (super::x86::same(x), super::x86::same(&cent.rows));
    let nu: &[U] = super::x86::same(&cent.packed_norms);
    debug_assert!(xu.len() >= n * d && cu.len() >= K * dp && n > 0);
    // SAFETY: every pointer is within its slice: rows past the end read the last row (their
    // lanes are never used), the centres hold `dp` values each, the last register of a row
    // loads its `tail` values only. Plain loops rather than `array::from_fn`: a closure that
    // is not inlined runs without this function's CPU features, and its intrinsics become
    // calls.
    unsafe {
        let zero = V::splat(U::zero());
        let mut norms = [zero; K];
        for (j, v) in norms.iter_mut().enumerate() {
            *v = V::bcast(nu.as_ptr().add(j));
        }
        for r0 in (0..n).step_by(w) {
            // Per centre: the groups' registers, `R` rows of `w / R` lanes each.
            // Left uninitialized: zeroing `8 K` registers would be a memset of up to 4 KiB a
            // block; the first `w / R` of each centre are written before they are read.
            let mut groups = [[MaybeUninit::<V>::uninit(); 8]; K];
            for q in 0..w / R {
                let mut rows = [xu.as_ptr(); R];
                for (r, p) in rows.iter_mut().enumerate() {
                    *p = xu.as_ptr().add((r0 + q * R + r).min(n - 1) * d);
                }
                let mut acc = [[zero; K]; R];
                let mut cv = [zero; K];
                for c in 0..=full {
                    if c == full && tail == 0 {
                        break;
                    }
                    for (j, v) in cv.iter_mut().enumerate() {
                        *v = V::load(cu.as_ptr().add(j * dp + c * w));
                    }
                    for (a, row) in acc.iter_mut().zip(&rows) {
                        if cent.prefetch {
                            // The same values [`PREFETCH_ROWS`] rows ahead (a hint that never
                            // faults, past the last row too).
                            let ahead = row.wrapping_add(c * w + PREFETCH_ROWS * d);
                            _mm_prefetch::<_MM_HINT_T0>(ahead.cast::<i8>());
                        }
                        let xv = if c < full {
                            V::load(row.add(c * w))
                        } else {
                            V::load_first(row.add(c * w), tail)
                        };
                        for (a, c) in a.iter_mut().zip(&cv) {
                            *a = V::fma(xv, *c, *a);
                        }
                    }
                }
                for (j, gj) in groups.iter_mut().enumerate() {
                    let mut col = [zero; R];
                    for (c, a) in col.iter_mut().zip(&acc) {
                        *c = a[j];
                    }
                    gj[q] = MaybeUninit::new(fold_all(&mut col, w));
                }
            }
            // The groups' rows of `w / R` lanes folded to one lane each, then the norms.
            let mut e = [zero; K];
            for ((e, g), nj) in e.iter_mut().zip(groups.iter_mut()).zip(&norms) {
                // The first `w / R` registers, written above.
                let g = std::slice::from_raw_parts_mut(g.as_mut_ptr().cast::<V>(), w / R);
                *e = V::add(*nj, fold_all(g, w / R));
            }
            settle_block::<T, V, U, K>(x, cent, &e, buf, out, r0);
        }
    }
}

/// The registers of `regs` (a power of two of them), rows of `g` lanes each, folded pairwise
/// ([`Fold::fold`]) into one register, the rows in order.
///
/// # Safety
/// As [`Fold`].
#[inline(always)]
unsafe fn fold_all<V: Fold<U>, U>(regs: &mut [V], g: usize) -> V {
    let (mut m, mut g) = (regs.len(), g);
    while m > 1 {
        for i in 0..m / 2 {
            // SAFETY: the caller's contract.
            regs[i] = unsafe { V::fold(regs[2 * i], regs[2 * i + 1], g) };
        }
        m /= 2;
        g /= 2;
    }
    regs[0]
}
