//! The direct path: distances in `f64` in the reference's order of operations, one centre per
//! vector lane (small `d` or `k`).

use crate::Element;
use crate::centres::{Centres, DIRECT_MAX_D, LANES, Method, take};
use crate::lloyd::{combine8, dist2_f64};

/// `$f::<T, D>($args)` for the dimension `$d` as a constant `D` from 1 to 11 (the direct
/// path's dimensions), else `$other`.
macro_rules! lanes_by_d {
    ($d:expr, $f:ident, ($($a:expr),*), $other:expr) => {
        match $d {
            1 => $f::<T, 1>($($a),*),
            2 => $f::<T, 2>($($a),*),
            3 => $f::<T, 3>($($a),*),
            4 => $f::<T, 4>($($a),*),
            5 => $f::<T, 5>($($a),*),
            6 => $f::<T, 6>($($a),*),
            7 => $f::<T, 7>($($a),*),
            8 => $f::<T, 8>($($a),*),
            9 => $f::<T, 9>($($a),*),
            10 => $f::<T, 10>($($a),*),
            11 => $f::<T, 11>($($a),*),
            _ => $other,
        }
    };
}
pub(crate) use lanes_by_d;

/// The squared distance of a point of `D <= 8` coordinates (already in `f64`) to a centre,
/// with the bits of [`dist2_f64`]: coordinate `t` is its partial sum `t`, the others are
/// empty. They are `-0.0` here where `dist2_f64` has `0.0`: `a + (-0.0)` is `a` for every `a`,
/// so the compiler drops those additions, and `a + 0.0` is `a` too for every `a` but `-0.0`,
/// which no sum of squares is.
#[inline(always)]
pub(crate) fn dist2_small<const D: usize>(x: &[f64; D], c: impl Fn(usize) -> f64) -> f64 {
    debug_assert!(D <= 8);
    combine8(std::array::from_fn(|u| {
        if u < D {
            let t = x[u] - c(u);
            t * t
        } else {
            -0.0
        }
    }))
}

/// The nearest centre of a point of `D <= 8` coordinates (already in `f64`) and its squared
/// distance, for centres in the caller's order ([`Centres::in_order`], direct method): the
/// smallest [`dist2_small`], ties to the lower index, as the reference. No per-point dispatch
/// and no range: the kernel of the small shapes (a few centres in a few dimensions), where
/// anything else per point costs as much as the distances.
/// Centre counts up to which [`nearest_in_order`] takes the centres one after the other.
const IN_ORDER_MAX_K: usize = 32;

#[inline(always)]
pub(crate) fn nearest_in_order<T: Element, const D: usize>(
    x: &[f64; D],
    cent: &Centres<T>,
) -> (u32, f64) {
    debug_assert!(cent.in_order && cent.d == D && cent.method == Method::Direct);
    // Strictly smaller replaces: ties keep the lower index; a NaN distance never wins.
    let mut best = (0u32, f64::INFINITY);
    // Up to IN_ORDER_MAX_K centres, one after the other: faster than the blocks below, which
    // win only from larger `k`.
    if cent.k <= IN_ORDER_MAX_K {
        let (rows, _) = cent.c64.as_chunks::<D>();
        for (j, c) in rows.iter().enumerate() {
            let v = dist2_small(x, |u| c[u]);
            if v < best.1 {
                best = (j as u32, v);
            }
        }
        return best;
    }
    // Blocks of LANES centres, transposed (slots past k are infinitely far): one vector per
    // coordinate, and per lane the running minimum over the blocks and its block (strictly
    // smaller replaces, so the earlier block keeps a tie; the block number is kept as an `f64`
    // so that the selects vectorise); then the lanes, ties to the lower index.
    let mut bv = [f64::INFINITY; LANES];
    let mut bb = [0f64; LANES];
    for (b, blk) in cent.dt.chunks_exact(D * LANES).enumerate() {
        let (rows, _) = blk.as_chunks::<LANES>();
        let rows = &rows[..D];
        let bf = b as f64;
        for l in 0..LANES {
            let v = dist2_small(x, |u| rows[u][l]);
            let better = v < bv[l];
            bv[l] = if better { v } else { bv[l] };
            bb[l] = if better { bf } else { bb[l] };
        }
    }
    // Every lane of block 0 is a centre (k >= LANES); a lane that found nothing below
    // infinity keeps block 0, so that all-infinite distances give centre 0, as the reference.
    // Without branches (the lanes' order is data): the smallest value, then the smallest centre
    // among the lanes that hold it.
    let m = bv
        .iter()
        .fold(f64::INFINITY, |a, &v| if v < a { v } else { a });
    let mut j = f64::INFINITY;
    for l in 0..LANES {
        let c = bb[l] * LANES as f64 + l as f64;
        let c = if bv[l] == m { c } else { f64::INFINITY };
        j = if c < j { c } else { j };
    }
    (j as u32, m)
}

/// Points per block of the lane kernels ([`nearest8_in_order`], [`nearest_two8`]): one
/// AVX-512 register of `f64`.
pub(crate) const POINT_LANES: usize = 8;

/// Eight points of `D` coordinates transposed, in `f64`: coordinate `u` of the points in
/// one vector, the input of [`dist8`].
///
/// (The lane kernels are written as loops over arrays, not `std::array::from_fn`: a
/// closure's code is shared by every caller, and where the compiler declines to inline it,
/// it runs in the baseline instruction set, outside the caller's AVX-512 or AVX2 version.)
#[inline(always)]
pub(crate) fn transpose8<T: Element, const D: usize>(x: &[[T; D]]) -> [[f64; POINT_LANES]; D] {
    debug_assert!(x.len() == POINT_LANES);
    let mut xt = [[0f64; POINT_LANES]; D];
    for (u, col) in xt.iter_mut().enumerate() {
        for (l, v) in col.iter_mut().enumerate() {
            *v = x[l][u].to_f64();
        }
    }
    xt
}

/// Each of eight points' ([`transpose8`], `D <= 16` coordinates) squared distance to the
/// centre `c`, with [`dist2_f64`]'s bits (coordinate `u` into partial sum `u % 8`, in order,
/// the sums added by [`combine8`]'s order), one vector operation for all eight.
#[inline(always)]
pub(crate) fn dist8<const D: usize>(xt: &[[f64; POINT_LANES]; D], c: &[f64]) -> [f64; POINT_LANES] {
    debug_assert!(D <= 16);
    // The partial sums, lane by lane: `0.0 + t * t` is `t * t` for the first square of a
    // sum; a sum with none is `-0.0` here, which every addition drops.
    let mut p = [[-0.0f64; POINT_LANES]; 8];
    for u in 0..D {
        for l in 0..POINT_LANES {
            let t = xt[u][l] - c[u];
            p[u % 8][l] = if u < 8 { t * t } else { p[u % 8][l] + t * t };
        }
    }
    let mut v = [0f64; POINT_LANES];
    for l in 0..POINT_LANES {
        v[l] = ((p[0][l] + p[4][l]) + (p[2][l] + p[6][l]))
            + ((p[1][l] + p[5][l]) + (p[3][l] + p[7][l]));
    }
    v
}

/// [`nearest_in_order`] for [`POINT_LANES`] points at once, the points in the vector lanes:
/// per centre, each lane's [`dist8`] and the same choice (strictly smaller replaces, so ties
/// keep the lower index and a NaN never wins), with no horizontal step per point. Returns
/// each point's centre and squared distance.
#[inline(always)]
pub(crate) fn nearest8_in_order<T: Element, const D: usize>(
    x: &[[T; D]],
    cent: &Centres<T>,
) -> ([u32; POINT_LANES], [f64; POINT_LANES]) {
    debug_assert!(cent.in_order && cent.d == D);
    let xt = transpose8::<T, D>(x);
    let mut bv = [f64::INFINITY; POINT_LANES];
    // The centres as whole `f64`s: selects of the distances' width vectorise for every
    // element type.
    let mut bj = [0f64; POINT_LANES];
    let (rows, _) = cent.c64.as_chunks::<D>();
    for (j, c) in rows.iter().enumerate() {
        let v = dist8::<D>(&xt, c);
        let j = j as f64;
        for l in 0..POINT_LANES {
            let better = v[l] < bv[l];
            bv[l] = if better { v[l] } else { bv[l] };
            bj[l] = if better { j } else { bj[l] };
        }
    }
    let mut labels = [0u32; POINT_LANES];
    for (o, &j) in labels.iter_mut().zip(&bj) {
        // SAFETY: `j` is a centre's index, a whole number below `k <= u32::MAX`.
        *o = unsafe { j.to_int_unchecked::<u32>() };
    }
    (labels, bv)
}

/// The rows of whole blocks of [`POINT_LANES`] in `x` (`d <= 11` columns, centres in the
/// caller's order), each one's nearest centre and squared distance into `out` as
/// [`nearest_in_order`] finds them ([`nearest8_in_order`]). Returns how many rows it did: 0
/// past eleven dimensions or for centres in another order.
#[inline(always)]
pub(crate) fn nearest_rows_lanes<T: Element>(
    x: &[T],
    cent: &Centres<T>,
    out: &mut [(u32, f64)],
) -> usize {
    #[inline(always)]
    fn rows<T: Element, const D: usize>(
        x: &[T],
        cent: &Centres<T>,
        out: &mut [(u32, f64)],
    ) -> usize {
        let (rows, _) = x.as_chunks::<D>();
        let blocks = rows.chunks_exact(POINT_LANES);
        let done = rows.len() - blocks.remainder().len();
        for (blk, o) in blocks.zip(out.chunks_exact_mut(POINT_LANES)) {
            let (bj, bv) = nearest8_in_order::<T, D>(blk, cent);
            for l in 0..POINT_LANES {
                o[l] = (bj[l], bv[l]);
            }
        }
        done
    }
    if !cent.in_order {
        return 0;
    }
    lanes_by_d!(cent.d, rows, (x, cent, out), 0)
}

/// The squared distances of the rows of whole blocks of [`POINT_LANES`] in `x` (`d <= 11`
/// columns) to every centre, `out[i k + j]`, each [`dist2_f64`]'s bits ([`dist8`]). Returns
/// how many rows it did: 0 past eleven dimensions (the direct path's).
#[inline(always)]
pub(crate) fn sq_distances_lanes<T: Element>(x: &[T], cent: &Centres<T>, out: &mut [f64]) -> usize {
    #[inline(always)]
    fn rows<T: Element, const D: usize>(x: &[T], cent: &Centres<T>, out: &mut [f64]) -> usize {
        let k = cent.k;
        let (rows, _) = x.as_chunks::<D>();
        let blocks = rows.chunks_exact(POINT_LANES);
        let done = rows.len() - blocks.remainder().len();
        for (blk, o) in blocks.zip(out.chunks_exact_mut(POINT_LANES * k)) {
            let xt = transpose8::<T, D>(blk);
            for j in 0..k {
                let v = dist8::<D>(&xt, cent.row(j));
                for l in 0..POINT_LANES {
                    o[l * k + j] = v[l];
                }
            }
        }
        done
    }
    lanes_by_d!(cent.d, rows, (x, cent, out), 0)
}

/// [`take`]'s rule for one lane, on whole `f64`s: a centre at `v` with caller index `id`
/// replaces the best so far (`v1`, caller index `id1`, `-1` for none: it always takes) when
/// nearer, or as near with a lower caller index. Bitwise rather than short-circuit tests:
/// branch-free lanes vectorise.
#[inline(always)]
fn takes(v: f64, id: f64, v1: f64, id1: f64) -> bool {
    (id1 < 0.0) | (v < v1) | ((v == v1) & (id < id1))
}

/// The nearest and second nearest of eight points among the slots `range`, per lane: what
/// [`nearest_two_direct`] returns for each point (the same distances, and the same choice by
/// [`take`]'s rule: nearer, or as near with a lower caller index). The slots and caller
/// indices are whole `f64`s, so that every select has the distances' width and vectorises.
#[inline(always)]
pub(crate) fn nearest_two8<T: Element, const D: usize>(
    xt: &[[f64; POINT_LANES]; D],
    cent: &Centres<T>,
    range: std::ops::Range<usize>,
) -> Lanes2 {
    let mut v1 = [f64::INFINITY; POINT_LANES];
    let mut s1 = [-1f64; POINT_LANES];
    let mut v2 = [f64::INFINITY; POINT_LANES];
    let mut id1 = [-1f64; POINT_LANES];
    for j in range {
        let v = dist8::<D>(xt, cent.row(j));
        let (jf, cid) = (j as f64, cent.id(j as u32) as f64);
        for l in 0..POINT_LANES {
            // (The first centre always, a NaN included, as `take`.)
            let take = takes(v[l], cid, v1[l], id1[l]);
            // The loser of the comparison is a candidate for second place.
            let loser = if take { v1[l] } else { v[l] };
            v2[l] = if loser < v2[l] { loser } else { v2[l] };
            v1[l] = if take { v[l] } else { v1[l] };
            s1[l] = if take { jf } else { s1[l] };
            id1[l] = if take { cid } else { id1[l] };
        }
    }
    Lanes2 { v1, s1, id1, v2 }
}

/// What [`nearest_two8`] finds for eight points: per lane the smallest squared distance `v1`,
/// its slot `s1` and caller index `id1` (whole `f64`s, `-1` for no centre), and the second
/// smallest `v2`.
#[derive(Clone, Copy, Default)]
pub(crate) struct Lanes2 {
    pub(crate) v1: [f64; POINT_LANES],
    pub(crate) s1: [f64; POINT_LANES],
    pub(crate) id1: [f64; POINT_LANES],
    pub(crate) v2: [f64; POINT_LANES],
}

impl Lanes2 {
    /// No centre yet: infinitely far, slot and caller index `-1`.
    #[inline(always)]
    pub(crate) fn none() -> Lanes2 {
        Lanes2 {
            v1: [f64::INFINITY; POINT_LANES],
            s1: [-1.0; POINT_LANES],
            id1: [-1.0; POINT_LANES],
            v2: [f64::INFINITY; POINT_LANES],
        }
    }

    /// `other`'s nearest as one more centre per lane, by [`take`]'s rule (a lane with none yet
    /// takes it): the nearest over groups.
    #[inline(always)]
    pub(crate) fn merge_nearest(&mut self, other: &Lanes2) {
        let Lanes2 { v1, s1, id1, .. } = self;
        for l in 0..POINT_LANES {
            let (v, id) = (other.v1[l], other.id1[l]);
            let take = takes(v, id, v1[l], id1[l]);
            v1[l] = if take { v } else { v1[l] };
            s1[l] = if take { other.s1[l] } else { s1[l] };
            id1[l] = if take { id } else { id1[l] };
        }
    }
}

/// The nearest slot of `x` among the slots `range` by the direct path, exactly: the
/// reference's distances (see the module docs), ties to the lower caller index.
#[inline(always)]
pub(crate) fn nearest_direct<T: Element>(
    x: &[T],
    cent: &Centres<T>,
    range: std::ops::Range<usize>,
) -> (u32, f64) {
    let (best, _) = direct_dispatch::<T, false>(x, cent, range);
    best
}

/// [`nearest_direct`] and the second smallest distance of the range (`f64::INFINITY` for a
/// range of one centre).
#[inline(always)]
pub(crate) fn nearest_two_direct<T: Element>(
    x: &[T],
    cent: &Centres<T>,
    range: std::ops::Range<usize>,
) -> ((u32, f64), f64) {
    direct_dispatch::<T, true>(x, cent, range)
}

#[inline(always)]
fn direct_dispatch<T: Element, const SECOND: bool>(
    x: &[T],
    cent: &Centres<T>,
    range: std::ops::Range<usize>,
) -> ((u32, f64), f64) {
    match cent.d {
        1 => direct_d::<T, 1, SECOND>(x, cent, range),
        2 => direct_d::<T, 2, SECOND>(x, cent, range),
        3 => direct_d::<T, 3, SECOND>(x, cent, range),
        4 => direct_d::<T, 4, SECOND>(x, cent, range),
        _ => direct_d::<T, 0, SECOND>(x, cent, range),
    }
}

/// The direct path for `d == D` (`D > 0`) or any `d` (`D == 0`); with `SECOND`, also the
/// second smallest distance.
// Index loops over fixed-size register blocks: the shape LLVM vectorises.
#[allow(clippy::needless_range_loop)]
#[inline(always)]
fn direct_d<T: Element, const D: usize, const SECOND: bool>(
    x: &[T],
    cent: &Centres<T>,
    range: std::ops::Range<usize>,
) -> ((u32, f64), f64) {
    let d = if D > 0 { D } else { cent.d };
    let mut best = (u32::MAX, f64::INFINITY);
    let mut second = f64::INFINITY;
    let consider = |j: usize, v: f64, best: &mut (u32, f64), second: &mut f64| {
        let old = *best;
        take(cent, j as u32, v, best);
        if SECOND {
            // The loser of the comparison is a candidate for second place.
            let loser = if best.0 == old.0 { v } else { old.1 };
            if loser < *second {
                *second = loser;
            }
        }
    };
    if D > 0 && range.len() < LANES {
        // Fewer centres than lanes at d <= 4: one partial sum per coordinate, added by
        // dist2_f64's own combine8 (the zero sums change no bits), with the point converted once.
        let mut xs = [0f64; 4];
        for (o, v) in xs.iter_mut().zip(x) {
            *o = v.to_f64();
        }
        for j in range {
            let c = cent.row(j);
            let p: [f64; 8] = std::array::from_fn(|t| {
                if t < D {
                    let u = xs[t] - c[t];
                    u * u
                } else {
                    0.0
                }
            });
            consider(j, combine8(p), &mut best, &mut second);
        }
        return (best, second);
    }
    if d > DIRECT_MAX_D || range.len() < LANES {
        for j in range {
            let v = dist2_f64(x, cent.row(j));
            consider(j, v, &mut best, &mut second);
        }
        return (best, second);
    }
    let mut xs = [0f64; DIRECT_MAX_D];
    for (o, v) in xs.iter_mut().zip(x) {
        *o = v.to_f64();
    }
    let (b0, b1) = (range.start / LANES, range.end.div_ceil(LANES));
    for b in b0..b1 {
        let v = block_dist2(&xs[..d], cent, b);
        let mut m = v[0];
        for &a in &v[1..] {
            m = if a < m { a } else { m };
        }
        let bar = if SECOND { second } else { best.1 };
        if m <= bar {
            for (l, &a) in v.iter().enumerate() {
                let j = b * LANES + l;
                if range.contains(&j) {
                    consider(j, a, &mut best, &mut second);
                }
            }
        }
    }
    (best, second)
}

/// The squared distances of a point (`xs`, its `d` coordinates in `f64`, `d <=`
/// [`DIRECT_MAX_D`]) to the [`LANES`] centres of block `b` of `cent.dt`, with the bits of
/// [`dist2_f64`] (slots past `k` are infinitely far).
#[inline(always)]
pub(crate) fn block_dist2<T>(xs: &[f64], cent: &Centres<T>, b: usize) -> [f64; LANES] {
    let d = xs.len();
    let blk = &cent.dt[b * d * LANES..(b + 1) * d * LANES];
    let (rows, _) = blk.as_chunks::<LANES>();
    // acc[u][l]: partial sum u (coordinates t with t % 8 == u) of lane l, as dist2_f64.
    // Coordinates in chunks of 8 zipped with the accumulators (no index arithmetic, no
    // bounds checks), so that each accumulator is one vector register.
    let mut acc = [[0f64; LANES]; 8];
    let (xcs, xr) = xs.as_chunks::<8>();
    let (rcs, rr) = rows.as_chunks::<8>();
    for (xc, rc) in xcs.iter().zip(rcs) {
        acc = add_chunk(acc, xc, rc);
    }
    for ((a, &xv), r) in acc.iter_mut().zip(xr).zip(rr) {
        *a = add_squared_differences(*a, xv, r);
    }
    std::array::from_fn(|l| combine8(std::array::from_fn(|u| acc[u][l])))
}

/// Whether [`every_dist2`] serves `k` centres in `d` dimensions: at most [`EVERY_MAX_K`]
/// centres (two blocks) in at most [`DIRECT_MAX_D`] dimensions.
pub(crate) fn every_serves(k: usize, d: usize) -> bool {
    k <= EVERY_MAX_K && d <= DIRECT_MAX_D
}

/// The most centres [`every_dist2`] takes: two blocks of [`LANES`].
pub(crate) const EVERY_MAX_K: usize = 2 * LANES;

/// The squared distances of `x` to every centre, by slot, into `out` (`k` of them, with the
/// bits of [`dist2_f64`]): one pass over the point per block of [`LANES`] centres, the
/// centres in the vector lanes. For few centres ([`every_serves`]; `cent.dt` built, see
/// [`Centres::with_blocks`]) this costs about what one distance at a time costs for one or
/// two centres.
#[inline(always)]
pub(crate) fn every_dist2<T: Element>(x: &[T], cent: &Centres<T>, out: &mut [f64; EVERY_MAX_K]) {
    let d = x.len();
    debug_assert!(every_serves(cent.k, d) && cent.dt.len() >= cent.k.div_ceil(LANES) * d * LANES);
    let mut xs = [0f64; DIRECT_MAX_D];
    for (o, v) in xs.iter_mut().zip(x) {
        *o = v.to_f64();
    }
    let blocks = cent.k.div_ceil(LANES);
    #[cfg(target_arch = "x86_64")]
    {
        let (xs, dt) = (&xs[..d], &cent.dt[..blocks * d * LANES]);
        if crate::isa::has_avx512() {
            // SAFETY: the CPU has AVX-512 (checked); `dt` holds `blocks` blocks of `d` rows.
            unsafe { every_x86::blocks_avx512(xs, dt, blocks, out) };
            return;
        }
        if crate::isa::has_avx2() {
            // SAFETY: the CPU has AVX2 (checked); `dt` holds `blocks` blocks of `d` rows.
            unsafe { every_x86::blocks_avx2(xs, dt, blocks, out) };
            return;
        }
    }
    for (b, o) in out
        .as_chunks_mut::<LANES>()
        .0
        .iter_mut()
        .enumerate()
        .take(blocks)
    {
        *o = block_dist2(&xs[..d], cent, b);
    }
}

/// [`every_dist2`] in explicit registers: [`block_dist2`]'s operations lane by lane (a
/// subtraction, a multiplication and an addition per coordinate into partial sum `t % 8`,
/// combined as [`combine8`]), so the same bits. The compiler's own vectorisation of
/// [`block_dist2`] inside the pruned step shuffled its accumulators.
#[cfg(target_arch = "x86_64")]
mod every_x86 {
    use super::{EVERY_MAX_K, LANES};
    use std::arch::x86_64::*;

    /// One version of the kernel: `$w` lanes a register (`LANES / $w` registers a block of
    /// centres, one pass over the point each), one register per partial sum.
    macro_rules! every_blocks {
        ($(#[$m:meta])* $name:ident, $features:literal, $w:literal, $zero:ident, $load:ident,
         $set1:ident, $sub:ident, $mul:ident, $add:ident, $store:ident) => {
            $(#[$m])*
            /// # Safety
            /// The CPU has the features named; `dt` holds `blocks <= 2` blocks of `xs.len()`
            /// rows of [`LANES`].
            #[target_feature(enable = $features)]
            #[inline]
            pub(super) unsafe fn $name(
                xs: &[f64],
                dt: &[f64],
                blocks: usize,
                out: &mut [f64; EVERY_MAX_K],
            ) {
                let d = xs.len();
                debug_assert!(blocks <= EVERY_MAX_K / LANES && dt.len() >= blocks * d * LANES);
                let parts = LANES / $w;
                // SAFETY: rows `u < d` of the `blocks` blocks are in `dt`, `xs[u]` for `u < d`,
                // and `out` holds `blocks * LANES` values.
                unsafe {
                    for h in 0..blocks * parts {
                        let base = dt.as_ptr().add((h / parts) * d * LANES + (h % parts) * $w);
                        let mut acc = [$zero(); 8];
                        let mut u = 0;
                        while u + 8 <= d {
                            // All eight partial sums (constant indices: registers).
                            for (t, a) in acc.iter_mut().enumerate() {
                                let c = $load(base.add((u + t) * LANES));
                                let v = $sub($set1(*xs.get_unchecked(u + t)), c);
                                *a = $add(*a, $mul(v, v));
                            }
                            u += 8;
                        }
                        // The last `d % 8` coordinates, into the first partial sums.
                        for (t, a) in acc.iter_mut().enumerate() {
                            if u + t < d {
                                let c = $load(base.add((u + t) * LANES));
                                let v = $sub($set1(*xs.get_unchecked(u + t)), c);
                                *a = $add(*a, $mul(v, v));
                            }
                        }
                        let s = $add(
                            $add($add(acc[0], acc[4]), $add(acc[2], acc[6])),
                            $add($add(acc[1], acc[5]), $add(acc[3], acc[7])),
                        );
                        $store(out.as_mut_ptr().add(h * $w), s);
                    }
                }
            }
        };
    }

    every_blocks!(
        /// With AVX-512: a block of centres a pass.
        blocks_avx512,
        "avx512f,avx512vl,avx512bw,avx512dq,avx2,fma",
        8,
        _mm512_setzero_pd,
        _mm512_loadu_pd,
        _mm512_set1_pd,
        _mm512_sub_pd,
        _mm512_mul_pd,
        _mm512_add_pd,
        _mm512_storeu_pd
    );
    every_blocks!(
        /// With AVX2: half a block of centres a pass.
        blocks_avx2,
        "avx2,fma",
        4,
        _mm256_setzero_pd,
        _mm256_loadu_pd,
        _mm256_set1_pd,
        _mm256_sub_pd,
        _mm256_mul_pd,
        _mm256_add_pd,
        _mm256_storeu_pd
    );
}

/// `a[l] + (xv - r[l])^2` for every lane: one vector subtraction, multiplication and addition
/// (not fused, so each lane's sum has the bits of [`dist2_f64`]'s). Whole arrays in and out:
/// the shape LLVM's vectoriser takes across the lanes (with `&mut` it vectorised across the
/// accumulators instead, with gathers and scatters).
/// [`add_squared_differences`] for 8 coordinates, accumulator `u` taking coordinate `u`.
/// Written out, not looped: a loop over the accumulators is vectorised across them (gathers
/// and scatters), the written-out calls each across the lanes, the accumulators in registers.
#[inline(always)]
fn add_chunk(acc: [[f64; LANES]; 8], xc: &[f64; 8], rc: &[[f64; LANES]; 8]) -> [[f64; LANES]; 8] {
    [
        add_squared_differences(acc[0], xc[0], &rc[0]),
        add_squared_differences(acc[1], xc[1], &rc[1]),
        add_squared_differences(acc[2], xc[2], &rc[2]),
        add_squared_differences(acc[3], xc[3], &rc[3]),
        add_squared_differences(acc[4], xc[4], &rc[4]),
        add_squared_differences(acc[5], xc[5], &rc[5]),
        add_squared_differences(acc[6], xc[6], &rc[6]),
        add_squared_differences(acc[7], xc[7], &rc[7]),
    ]
}

#[inline(always)]
fn add_squared_differences(a: [f64; LANES], xv: f64, r: &[f64; LANES]) -> [f64; LANES] {
    std::array::from_fn(|l| {
        let diff = xv - r[l];
        a[l] + diff * diff
    })
}

#[cfg(test)]
mod every_tests {
    use super::*;

    /// [`every_dist2`] and each of its versions (AVX-512, AVX2, portable) give
    /// [`dist2_f64`]'s bits for every centre: one block and two, every `d` up to
    /// [`DIRECT_MAX_D`], `f32` and `f64` points, values over many magnitudes.
    #[test]
    fn every_dist2_is_dist2_f64() {
        fn check<T: Element>() {
            for d in 1..=DIRECT_MAX_D {
                for k in [1, 3, 8, 9, 16] {
                    let seed = (d * 31 + k) as u64;
                    let scale = |v: f64, i: usize| v * 10f64.powi((i % 7) as i32 - 3);
                    let c: Vec<f64> = crate::tests::random_data(k, d, seed)
                        .iter()
                        .enumerate()
                        .map(|(i, &v)| scale(v, i))
                        .collect();
                    let cent = Centres::<T>::new(&c, k, d, None, Method::Gemm, false).with_blocks();
                    let x: Vec<T> = crate::tests::random_data(5, d, seed + 1)
                        .iter()
                        .enumerate()
                        .map(|(i, &v)| T::from_f64(scale(v, i + 3)))
                        .collect();
                    for xr in x.chunks_exact(d) {
                        let want: Vec<u64> = (0..k)
                            .map(|j| dist2_f64(xr, cent.row(j)).to_bits())
                            .collect();
                        let mut out = [f64::INFINITY; EVERY_MAX_K];
                        every_dist2(xr, &cent, &mut out);
                        let bits =
                            |o: &[f64]| o[..k].iter().map(|v| v.to_bits()).collect::<Vec<_>>();
                        assert_eq!(bits(&out), want, "d {d} k {k}");
                        let xs: Vec<f64> = xr.iter().map(|v| v.to_f64()).collect();
                        let mut portable = [f64::INFINITY; EVERY_MAX_K];
                        for b in 0..k.div_ceil(LANES) {
                            portable[b * LANES..(b + 1) * LANES]
                                .copy_from_slice(&block_dist2(&xs, &cent, b));
                        }
                        assert_eq!(bits(&portable), want, "portable d {d} k {k}");
                        #[cfg(target_arch = "x86_64")]
                        {
                            let blocks = k.div_ceil(LANES);
                            if crate::isa::has_avx2() {
                                let mut o = [f64::INFINITY; EVERY_MAX_K];
                                // SAFETY: AVX2 checked; `dt` holds `blocks` blocks of `d` rows.
                                unsafe { every_x86::blocks_avx2(&xs, &cent.dt, blocks, &mut o) };
                                assert_eq!(bits(&o), want, "AVX2 d {d} k {k}");
                            }
                            if crate::isa::has_avx512() {
                                let mut o = [f64::INFINITY; EVERY_MAX_K];
                                // SAFETY: AVX-512 checked; `dt` holds `blocks` blocks of `d` rows.
                                unsafe { every_x86::blocks_avx512(&xs, &cent.dt, blocks, &mut o) };
                                assert_eq!(bits(&o), want, "AVX-512 d {d} k {k}");
                            }
                        }
                    }
                }
            }
        }
        check::<f32>();
        check::<f64>();
    }
}
