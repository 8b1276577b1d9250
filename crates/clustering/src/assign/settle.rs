//! Settling a label exactly from a point's band: the lone candidate, or the candidates
//! compared with the reference distance.

use super::band::{Band, lane_mins, lanes_min, le_mask};
use crate::Element;
use crate::centres::{Centres, take};
use crate::lloyd::dist2_f64;

/// Lanes of [`segment_min`].
pub(super) const SEGMENT: usize = 16;

/// The smallest of `v[a..b]`, [`SEGMENT`] lanes at a time (the lanes past `b` masked, so the
/// loop vectorises whatever the length; `v` holds [`SEGMENT`] values past `b`): a group's
/// minimum in the first step of the pruned algorithms, where a scalar running minimum (one
/// dependent comparison per value) costs a large share of the step.
#[inline(always)]
pub(super) fn segment_min<T: Element>(v: &[T], a: usize, b: usize) -> T {
    let mut m = [T::MAX; SEGMENT];
    let mut s = a;
    while s < b {
        let len = b - s;
        let c: &[T; SEGMENT] = v[s..s + SEGMENT].try_into().expect("padded");
        for l in 0..SEGMENT {
            let x = if l < len { c[l] } else { T::MAX };
            m[l] = if x < m[l] { x } else { m[l] };
        }
        s += SEGMENT;
    }
    lanes_min(m)
}

/// The label (storage slot) of a point, from its [`Band`] (of [`scan_product`](super::scan_product), or several
/// merged), and an upper bound on its squared distance (the exact [`dist2_f64`] value whenever
/// it was computed). `incumbent` is a slot whose exact distance is already known (the previous
/// label of the pruned algorithms, or the best of the groups computed directly), compared as
/// any candidate. Exact distances are computed only for candidates that the error bound cannot
/// separate. `None` when the band overflowed and an unlisted centre may be nearest: then every
/// scanned centre must be compared exactly ([`exact_over`]).
#[inline(always)]
pub(crate) fn finish<T: Element>(
    x: &[T],
    xn2: f64,
    band: &Band<T>,
    cent: &Centres<T>,
    incumbent: Option<(u32, f64)>,
) -> Option<(u32, f64)> {
    let mut best = incumbent.unwrap_or((u32::MAX, f64::INFINITY));
    if band.best_slot == u32::MAX {
        return Some(best);
    }
    let err = cent.err(xn2);
    let lead = band.best.to_f64();
    // Candidates whose exact distance may be the smallest: within 2 err of the best product
    // value, or of the incumbent's exact value (product values are distances less |x|^2).
    let limit = lead.min(best.1 - xn2 - err) + 2.0 * err;
    if band.floor().to_f64() <= limit {
        return None;
    }
    let mut near = 0;
    let mut only = (u32::MAX, 0.0);
    for i in 0..band.len as usize {
        if band.val[i].to_f64() > limit || incumbent.is_some_and(|(s, _)| s == band.slot[i]) {
            continue;
        }
        near += 1;
        only = (band.slot[i], band.val[i].to_f64());
    }
    if near == 1 && (incumbent.is_none() || only.1 + err < best.1 - xn2) {
        // One candidate, certainly nearer than the incumbent: no exact distance needed.
        return Some((only.0, xn2 + only.1 + err));
    }
    for i in 0..band.len as usize {
        let j = band.slot[i];
        if band.val[i].to_f64() > limit || incumbent.is_some_and(|(s, _)| s == j) {
            continue;
        }
        take(cent, j, dist2_f64(x, cent.row(j as usize)), &mut best);
    }
    Some(best)
}

/// The nearest slot of a row of product values (`norms[j] + row[j]`, slots from 0) and its
/// distance bound, when a single value lies within the point's band of the smallest: what
/// [`Band::scan`] and [`finish`] would return for that row (the same value, slot and
/// distance), without building the band. `None` when the band holds more than one value or
/// [`finish`] would need exact distances: the caller then settles the row ([`settle`]).
/// `avx512` is [`crate::isa::has_avx512`], read once by the caller.
#[inline(always)]
pub(super) fn single_nearest<T: Element>(
    row: &[T],
    norms: &[T],
    xn2: f64,
    cent: &Centres<T>,
    avx512: bool,
) -> Option<(u32, f64)> {
    let (rows, rrest) = row.as_chunks::<16>();
    let (ns, nrest) = norms.as_chunks::<16>();
    let rest = || nrest.iter().zip(rrest).map(|(&n, &r)| n + r);
    let m = rest().fold(lanes_min(lane_mins::<T, false>(rows, ns).0), |m, v| {
        if v < m { v } else { m }
    });
    let bar = m + cent.band_width(xn2);
    let mut count = 0;
    let mut first = u32::MAX;
    for (b, (r, n)) in rows.iter().zip(ns).enumerate() {
        let mask = le_mask(r, n, bar, avx512);
        count += mask.count_ones();
        if first == u32::MAX && mask != 0 {
            first = (b * 16) as u32 + mask.trailing_zeros();
        }
    }
    for (l, v) in rest().enumerate() {
        if v <= bar {
            count += 1;
            first = first.min((rows.len() * 16 + l) as u32);
        }
    }
    // The band's floor is `bar` (its second value is the smallest, as `scan` leaves it
    // without `SECOND`); `finish` computes exact distances when that is within its limit.
    let err = cent.err(xn2);
    let lead = m.to_f64();
    (count == 1 && bar.to_f64() > lead + 2.0 * err).then_some((first, xn2 + lead + err))
}

/// The label and distance bound of a point from its band over every centre ([`finish`]
/// without an incumbent), or from every exact distance when the band cannot tell.
pub(super) fn settle<T: Element>(
    x: &[T],
    xn2: f64,
    band: &Band<T>,
    cent: &Centres<T>,
) -> (u32, f64) {
    finish(x, xn2, band, cent, None).unwrap_or_else(|| {
        let mut best = (u32::MAX, f64::INFINITY);
        exact_over(x, cent, 0..cent.k, &mut best);
        best
    })
}

/// The exact nearest slot of `range`, with `best` as the incumbent (the fallback of
/// [`finish`]).
#[inline(never)]
pub(crate) fn exact_over<T: Element>(
    x: &[T],
    cent: &Centres<T>,
    range: std::ops::Range<usize>,
    best: &mut (u32, f64),
) {
    for j in range {
        take(cent, j as u32, dist2_f64(x, cent.row(j)), best);
    }
}
