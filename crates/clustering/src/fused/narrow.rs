//! The fused kernel for a few centres (`k <=` [`NARROW_MAX_K`]) with AVX-512: the points in
//! the vector lanes, not the centres.
//!
//! The general kernel puts the centres in the lanes, so with three centres it fills three of
//! sixteen `f32` lanes and spends one multiply-add per coordinate of every point whatever `k`
//! is, and then a horizontal minimum per point. Here the rows of the data are kept
//! transposed in blocks of one register of rows ([`pack_rows`], once per fit): per
//! coordinate, one load of a block's values and one multiply-add per centre (its packed
//! coefficient broadcast), so `k / W` multiply-adds per point and coordinate instead of one.
//! The minimum, the band and the lone lane are then settled for a whole block of points at
//! once with vector compares and a few bit operations; the rows that need it go through the
//! same [`settle_row`] as the general kernel, so the labels are the reference's, bit for bit.

use super::x86::{Lanes, Z32, Z64};
use super::{Buffer, band_widths, settle_row};
use crate::Element;
use crate::centres::Centres;
use std::any::TypeId;

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

/// The labels (storage slots) of the rows of `x` (`xn2` their `|x|^2`), whose packed blocks
/// ([`pack_rows`]) start at `packed`, into `out`.
///
/// # Safety
/// The CPU has AVX-512 (F, VL, BW, DQ), AVX2, FMA, BMI2 and POPCNT; `cent.k <=`
/// [`NARROW_MAX_K`]; `packed` holds the blocks of every row of `out`; `buf` is sized for at
/// least `out.len()` rounded up to whole blocks.
#[target_feature(enable = "avx512f,avx512vl,avx512bw,avx512dq,avx2,fma,bmi1,bmi2,popcnt")]
pub(super) unsafe fn labels_narrow_avx512<T: Element>(
    x: &[T],
    xn2: &[f64],
    packed: &[T],
    cent: &Centres<T>,
    buf: &mut Buffer<T>,
    out: &mut [u32],
) {
    band_widths(&xn2[..out.len()], cent, buf);
    // SAFETY: the caller's contract.
    unsafe {
        if TypeId::of::<T>() == TypeId::of::<f32>() {
            by_k::<T, Z32, f32>(x, packed, cent, buf, out);
        } else {
            by_k::<T, Z64, f64>(x, packed, cent, buf, out);
        }
    }
}

/// [`blocks`] with the centre count a constant, and enough blocks at a time to keep eight
/// sums in flight.
///
/// # Safety
/// As [`labels_narrow_avx512`]; `U` is `T`.
#[inline(always)]
unsafe fn by_k<T: Element, V: Lanes<U>, U: Element>(
    x: &[T],
    packed: &[T],
    cent: &Centres<T>,
    buf: &Buffer<T>,
    out: &mut [u32],
) {
    // SAFETY: the caller's contract; each constant is the centre count it names.
    unsafe {
        match cent.k {
            1 => blocks::<T, V, U, 1, 8>(x, packed, cent, buf, out),
            2 => blocks::<T, V, U, 2, 4>(x, packed, cent, buf, out),
            3 => blocks::<T, V, U, 3, 3>(x, packed, cent, buf, out),
            4 => blocks::<T, V, U, 4, 2>(x, packed, cent, buf, out),
            5 => blocks::<T, V, U, 5, 2>(x, packed, cent, buf, out),
            6 => blocks::<T, V, U, 6, 1>(x, packed, cent, buf, out),
            7 => blocks::<T, V, U, 7, 1>(x, packed, cent, buf, out),
            8 => blocks::<T, V, U, 8, 1>(x, packed, cent, buf, out),
            k => unreachable!("the narrow kernel serves 1 to 8 centres, not {k}"),
        }
    }
}

/// Every block of the rows: `B` blocks at a time while that many remain, then one.
///
/// # Safety
/// As [`labels_narrow_avx512`]; `U` is `T`; `cent.k == K`.
#[inline(always)]
unsafe fn blocks<T: Element, V: Lanes<U>, U: Element, const K: usize, const B: usize>(
    x: &[T],
    packed: &[T],
    cent: &Centres<T>,
    buf: &Buffer<T>,
    out: &mut [u32],
) {
    let nblocks = out.len().div_ceil(V::W);
    let mut b = 0;
    // SAFETY: the caller's contract; `b + B` or `b + 1` blocks exist.
    unsafe {
        while b + B <= nblocks {
            group::<T, V, U, K, B>(x, packed, cent, buf, out, b);
            b += B;
        }
        while b < nblocks {
            group::<T, V, U, K, 1>(x, packed, cent, buf, out, b);
            b += 1;
        }
    }
}

/// Blocks `b0..b0 + B` of the rows: the values of their rows against the `K` centres, then
/// each row's label.
///
/// # Safety
/// As [`blocks`]; blocks `b0..b0 + B` hold rows of `out` (the last possibly in part).
#[inline(always)]
unsafe fn group<T: Element, V: Lanes<U>, U: Element, const K: usize, const B: usize>(
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
        let mut acc: [[V; K]; B] = [std::array::from_fn(|j| V::bcast(nu.as_ptr().add(j))); B];
        let base = pu.as_ptr().add(b0 * d * w);
        for u in 0..d {
            let row = cu.as_ptr().add(u * kp);
            let cv: [V; K] = std::array::from_fn(|j| V::bcast(row.add(j)));
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
unsafe fn settle_block<T: Element, V: Lanes<U>, U: Element, const K: usize>(
    x: &[T],
    cent: &Centres<T>,
    e: &[V; K],
    buf: &Buffer<T>,
    out: &mut [u32],
    r0: usize,
) {
    let rows = (out.len() - r0).min(V::W);
    let (widths, err2): (&[U], _) = (super::x86::same(&buf.width), &buf.err2);
    debug_assert!(widths.len() >= r0 + V::W);
    // SAFETY: the caller's contract; the arrays hold 16 >= `w` lanes.
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
        let lone = seen & !multi;
        let mut ms = [U::zero(); 16];
        let mut bs = [U::zero(); 16];
        m.store(ms.as_mut_ptr());
        bar.store(bs.as_mut_ptr());
        // Each centre's values by lane, stored once for the block's first lane to settle.
        let mut lanes: Option<[[U; 16]; K]> = None;
        for l in 0..rows {
            let i = r0 + l;
            let (lead, limit) = (ms[l].to_f64(), bs[l].to_f64());
            if lone >> l & 1 == 1 && limit.is_finite() && limit > lead + err2[i] {
                out[i] = (bits[0] >> l & 1) | (bits[1] >> l & 1) << 1 | (bits[2] >> l & 1) << 2;
                continue;
            }
            // The general kernel's settling, from this lane's values.
            let lanes = lanes.get_or_insert_with(|| {
                std::array::from_fn(|j| {
                    let mut v = [U::zero(); 16];
                    e[j].store(v.as_mut_ptr());
                    v
                })
            });
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
                (T::from_f64(lead), T::from_f64(limit), err2[i]),
                (count, first),
            );
        }
    }
}
