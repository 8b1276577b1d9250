//! The leaves of a bounded step: the first step of a run (every distance, every bound set)
//! here, a later one (only the groups whose bounds fail) in `pruned.rs`.

use std::sync::atomic::Ordering;

use super::groups::Groups;
use super::pruned::pruned_leaf;
use super::{LeafRows, StepCtx, bound_exact, bound_product, sqrt_down, sqrt_up};
use crate::Element;
use crate::assign::lanes_by_d;
use crate::assign::{
    Band, Lanes2, Method, POINT_LANES, STEP_TILE_ROWS, Scratch, exact_over, finish,
    nearest_two_direct, nearest_two8, row_norms, scan_product_groups, take, transpose8,
};
use crate::cpu::{add_point, formula_inertia};
use crate::lloyd::StepStats;

/// Rows whose failing groups are gathered together (bounded scratch per thread).
pub(super) const SUB: usize = 2048;
/// A point whose failing groups hold more than `1 / FULL_SHARE` of the centres is computed
/// against every centre (one product at full speed, every bound refreshed).
pub(super) const FULL_SHARE: usize = 3;

/// How many rows ahead of its bound tests a pruned step loads the points.
pub(super) const PREFETCH_ROWS: usize = 8;

/// Asks the core to load the cache lines of `row` ([`gpu_primitives::prefetch`], one per 64
/// bytes).
#[inline(always)]
pub(super) fn prefetch_row<T>(row: &[T]) {
    let base = row.as_ptr().cast::<u8>();
    for off in (0..std::mem::size_of_val(row)).step_by(64) {
        gpu_primitives::prefetch(base.wrapping_add(off));
    }
}

isa_versions!(
    /// One leaf of a bounded step: the first step of a run (`fresh`: every distance, every
    /// bound set) or a later one (only the groups whose bounds fail).
    pub(super) fn leaf<T: Element>(
        x: &[T],
        d: usize,
        weights: Option<&[f64]>,
        ctx: &StepCtx<'_, T>,
        rows: LeafRows<'_>,
        fresh: bool,
    ) -> StepStats {
        let input = LeafInput { x, d, weights, ctx };
        if fresh {
            full_leaf(input, rows)
        } else {
            pruned_leaf(input, rows)
        }
    }
);

/// What a leaf reads: its points (`d` columns) and their weights, and the step's context.
pub(super) struct LeafInput<'a, 'c, T> {
    pub(super) x: &'a [T],
    pub(super) d: usize,
    pub(super) weights: Option<&'a [f64]>,
    pub(super) ctx: &'a StepCtx<'c, T>,
}

/// The first step of a run: every distance, and every bound set.
#[inline(always)]
fn full_leaf<T: Element>(input: LeafInput<'_, '_, T>, rows: LeafRows<'_>) -> StepStats {
    let LeafInput { x, d, weights, ctx } = input;
    let (cent, g) = (ctx.cent, ctx.g);
    let (k, t) = (cent.k, g.t);
    let exact = cent.method == Method::Direct;
    let mut st = StepStats::zeros(k, d);
    let mut q = if exact { Vec::new() } else { vec![0.0; k] };
    let mut s = Scratch::new();
    let mut gmin: Vec<T> = Vec::new();
    let mut out = vec![(0u32, 0f64); STEP_TILE_ROWS];
    for (ci, xc) in x.chunks(STEP_TILE_ROWS * d).enumerate() {
        let p = xc.len() / d;
        let i0 = ci * STEP_TILE_ROWS;
        full_tile(
            xc,
            ctx,
            &mut s,
            &mut gmin,
            None,
            &mut out[..p],
            &mut rows.lower[i0 * t..(i0 + p) * t],
        );
        for (r, xr) in xc.chunks_exact(d).enumerate() {
            let i = i0 + r;
            let (slot, d2) = out[r];
            rows.upper[i] = sqrt_up(d2);
            let label = cent.id(slot);
            if rows.labels[i] != label {
                st.changed += 1;
                rows.labels[i] = label;
            }
            let w = weights.map_or(1.0, |w| w[i]);
            add_point(&mut st, &mut q, exact, xr, w, label as usize, d2);
        }
    }
    if !exact {
        st.inertia = formula_inertia(&st, &q, ctx.centroids, d);
    }
    ctx.evaluated
        .fetch_add((x.len() / d * k) as u64, Ordering::Relaxed);
    st
}

/// The rows of `xt` (at most [`STEP_TILE_ROWS`]) against every centre: their labels (slot) and
/// squared distances (exact on the direct path, an upper bound on the product path) in
/// `out`, every group bound in `lbs` (`t` per row). `incumbents` are slots whose exact
/// distances are known (the old labels of a pruned step).
#[inline(always)]
pub(super) fn full_tile<T: Element>(
    xt: &[T],
    ctx: &StepCtx<'_, T>,
    s: &mut Scratch<T>,
    gmin: &mut Vec<T>,
    incumbents: Option<&[(u32, f64)]>,
    out: &mut [(u32, f64)],
    lbs: &mut [f32],
) {
    let (cent, g) = (ctx.cent, ctx.g);
    let (k, t, d) = (cent.k, g.t, cent.d);
    if cent.method == Method::Gemm {
        row_norms(xt, d, &mut s.xn2);
        scan_product_groups(xt, cent, &g.starts, s, gmin);
    }
    // Direct path (at most eleven dimensions): the rows eight at a time in the vector lanes
    // (the same results), the last few below.
    let done = if cent.method == Method::Direct {
        lanes_by_d!(d, full_rows_lanes, (xt, ctx, incumbents, out, lbs), 0)
    } else {
        0
    };
    // Direct path: the nearest and the second smallest of each group, to set its bound once
    // the label is known.
    let mut first = Vec::new();
    let mut second = Vec::new();
    if cent.method == Method::Direct {
        first.resize(t, (0u32, 0f64));
        second.resize(t, 0f64);
    }
    for (r, xr) in xt.chunks_exact(d).enumerate().skip(done) {
        let lb = &mut lbs[r * t..(r + 1) * t];
        let inc = incumbents.map(|v| v[r]);
        out[r] = if cent.method == Method::Gemm {
            let (xn2, top) = (s.xn2[r], &s.top[r]);
            let best = finish(xr, xn2, top, cent, inc).unwrap_or_else(|| {
                let mut b = inc.unwrap_or((u32::MAX, f64::INFINITY));
                exact_over(xr, cent, 0..k, &mut b);
                b
            });
            let err = cent.err(xn2);
            let base = xn2 - err;
            for (b, e) in lb.iter_mut().zip(&gmin[r * t..(r + 1) * t]) {
                *b = sqrt_down(base + e.to_f64());
            }
            let gl = g.group_of_slot[best.0 as usize] as usize;
            lb[gl] = bound_product(xn2, other_in_group(top, best.0, gl, g), err);
            best
        } else {
            let mut best = inc.unwrap_or((u32::MAX, f64::INFINITY));
            for gg in 0..t {
                let ((s1, v1), v2) = nearest_two_direct(xr, cent, g.range(gg));
                first[gg] = (s1, v1);
                second[gg] = v2;
                take(cent, s1, v1, &mut best);
            }
            for gg in 0..t {
                let (s1, v1) = first[gg];
                lb[gg] = bound_exact(if s1 == best.0 { second[gg] } else { v1 });
            }
            best
        };
    }
}

/// [`full_tile`]'s direct path for `d == D <= 11` on the rows of whole blocks of
/// [`POINT_LANES`], the rows in the vector lanes ([`nearest_two8`] per group): the labels,
/// distances and bounds the row-by-row path sets, bit for bit. Returns how many rows it did.
#[inline(always)]
fn full_rows_lanes<T: Element, const D: usize>(
    xt: &[T],
    ctx: &StepCtx<'_, T>,
    incumbents: Option<&[(u32, f64)]>,
    out: &mut [(u32, f64)],
    lbs: &mut [f32],
) -> usize {
    let (cent, g) = (ctx.cent, ctx.g);
    let t = g.t;
    let (rows, _) = xt.as_chunks::<D>();
    let blocks = rows.chunks_exact(POINT_LANES);
    let done = rows.len() - blocks.remainder().len();
    let mut groups = vec![Lanes2::default(); t];
    for (b, blk) in blocks.enumerate() {
        let r0 = b * POINT_LANES;
        let x8 = transpose8::<T, D>(blk);
        for (gg, found) in groups.iter_mut().enumerate() {
            *found = nearest_two8::<T, D>(&x8, cent, g.range(gg));
        }
        // The nearest over the groups, lane by lane by `take`'s rule, from the incumbent
        // (caller index `-1`: none yet, the first group's always).
        let mut best = Lanes2::none();
        if let Some(inc) = incumbents {
            for (l, &(slot, d2)) in inc[r0..r0 + POINT_LANES].iter().enumerate() {
                best.v1[l] = d2;
                best.s1[l] = slot as f64;
                best.id1[l] = cent.id(slot) as f64;
            }
        }
        for f in &groups {
            best.merge_nearest(f);
        }
        // Each group's bound: its second smallest where it holds the nearest, else its
        // smallest.
        for (gg, f) in groups.iter().enumerate() {
            let mut lb = [0f32; POINT_LANES];
            for (l, b) in lb.iter_mut().enumerate() {
                *b = bound_exact(if f.s1[l] == best.s1[l] {
                    f.v2[l]
                } else {
                    f.v1[l]
                });
            }
            for (l, &v) in lb.iter().enumerate() {
                lbs[(r0 + l) * t + gg] = v;
            }
        }
        for l in 0..POINT_LANES {
            // (A slot of `-1`, no centre, only for empty groups: the row-by-row path's
            // `u32::MAX`.)
            let s = best.s1[l];
            out[r0 + l] = (if s < 0.0 { u32::MAX } else { s as u32 }, best.v1[l]);
        }
    }
    done
}

/// A lower bound on the product values of the centres of group `gl` other than `slot`, from a
/// full scan's band: the smallest such listed value, or the band's floor.
fn other_in_group<T: Element>(band: &Band<T>, slot: u32, gl: usize, g: &Groups) -> f64 {
    if g.range(gl).len() == 1 {
        // The group is the slot alone: no other centre.
        return f64::INFINITY;
    }
    let mut v = band.floor().to_f64();
    for i in 0..band.len as usize {
        let s = band.slot[i];
        if s != slot && g.group_of_slot[s as usize] as usize == gl {
            v = v.min(band.val[i].to_f64());
        }
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::assign::{Centres, GroupBlocks};
    use crate::bounds::groups::Jumpers;
    use crate::lloyd::dist2_f64;
    use std::sync::atomic::AtomicU64;

    /// The rows of a first bounded step in the vector lanes ([`full_rows_lanes`]) get the
    /// labels, distances and group bounds of the row-by-row path, bit for bit: with and
    /// without incumbents, with ties (a duplicated centre, points on centres), one group
    /// (Hamerly), several (Yinyang) and one centre each (Elkan).
    #[test]
    fn rows_in_lanes_are_the_rows_one_by_one() {
        for d in 1..=11 {
            for (k, t) in [(5, 1), (40, 4), (12, 12), (70, 7)] {
                let n = 203;
                let mut x = crate::tests::random_data(n, d, (d * 31 + k) as u64);
                let mut c = crate::tests::random_data(k, d, (d * 7 + k) as u64);
                c.copy_within(d..2 * d, (k - 1) * d);
                for i in 0..5 {
                    x.copy_within(i * d..(i + 1) * d, (i * 9 + 3) * d);
                    x[(i * 11) * d..(i * 11 + 1) * d].copy_from_slice(&c[i * d..(i + 1) * d]);
                }
                let g = Groups::new(&c, k, d, t);
                let cent = Centres::<f64>::new(&c, k, d, Some(&g.order), Method::Direct, false);
                let blocks = GroupBlocks::new(&cent, &g.starts, |_| false);
                let evaluated = AtomicU64::new(0);
                let jump = Jumpers::default();
                let ctx = StepCtx {
                    cent: &cent,
                    blocks: &blocks,
                    centroids: &c,
                    g: &g,
                    drift_group: &[],
                    drift_centre: &[],
                    half_gap: &[],
                    jump: &jump,
                    every: false,
                    evaluated: &evaluated,
                };
                let inc: Vec<(u32, f64)> = (0..n)
                    .map(|i| {
                        let s = (i * 7 % k) as u32;
                        (s, dist2_f64(&x[i * d..(i + 1) * d], cent.row(s as usize)))
                    })
                    .collect();
                for incumbents in [None, Some(&inc[..])] {
                    let (mut s, mut gmin) = (Scratch::new(), Vec::new());
                    let mut out = vec![(0u32, 0f64); n];
                    let mut lbs = vec![0f32; n * g.t];
                    full_tile(&x, &ctx, &mut s, &mut gmin, incumbents, &mut out, &mut lbs);
                    for i in 0..n {
                        // One row a tile: no whole block of lanes, the row-by-row path.
                        let (mut o, mut lb) = ([(0u32, 0f64)], vec![0f32; g.t]);
                        let one = incumbents.map(|v| &v[i..i + 1]);
                        let row = &x[i * d..(i + 1) * d];
                        full_tile(row, &ctx, &mut s, &mut gmin, one, &mut o, &mut lb);
                        let what = format!("d {d} k {k} t {} row {i} {:?}", g.t, one);
                        assert_eq!(out[i].0, o[0].0, "{what}");
                        assert_eq!(out[i].1.to_bits(), o[0].1.to_bits(), "{what}");
                        let bits = |v: &[f32]| v.iter().map(|b| b.to_bits()).collect::<Vec<_>>();
                        assert_eq!(bits(&lbs[i * g.t..(i + 1) * g.t]), bits(&lb), "{what}");
                    }
                }
            }
        }
    }
}
