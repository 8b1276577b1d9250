//! A later step of a bounded run (every step after a run's first): the bounds moved by the
//! drifts, and only the groups whose bounds fail computed, in stages on sub-blocks of rows.

use std::sync::atomic::Ordering;

use super::groups::moved_bound;
use super::leaf::{FULL_SHARE, LeafInput, PREFETCH_ROWS, SUB, full_tile, prefetch_row};
use super::{DOWN32, LeafRows, SLACK, StepCtx, UP32, bound_exact, bound_product, sqrt_up};
use crate::Element;
use crate::assign::{
    Band, Centres, EVERY_MAX_K, Method, Scratch, TILE_ROWS, blocked_products, every_dist2,
    exact_over, finish, lanes_min, nearest_two_direct, norm2, scan_product, take,
};
use crate::cpu::{add_point, formula_inertia};
use crate::lloyd::{StepStats, dist2_f64};

/// What computing one group for one point found: the smallest value and its slot, the second
/// smallest (product values when `approx`, else exact squared distances).
#[derive(Clone, Copy)]
struct PairResult {
    v1: f64,
    s1: u32,
    v2: f64,
    approx: bool,
}

/// A point whose bounds failed, while its groups are computed.
struct Pending<T> {
    /// Row within the sub-block.
    row: usize,
    /// Best exact candidate so far (the old centre first).
    best: (u32, f64),
    /// Product candidates of the groups computed by products.
    top: Band<T>,
    /// `|x|^2` (when a group is computed by products).
    xn2: f64,
    /// Its pairs: `pairs[first..last]`.
    first: usize,
    last: usize,
    /// The far movers computed for it: `singles[..]` (slot, exact squared distance).
    singles: std::ops::Range<usize>,
}

/// Lowers every bound by its group's drift and returns the smallest. In `f32`, vectorised:
/// the difference is shrunk by a relative `2^-21`, which covers the rounding of the
/// subtraction and of the multiplication (each at most `2^-24` of the result), so the result
/// stays below the exact difference; negative results become 0.
#[inline(always)]
fn lower_bounds(lbs: &mut [f32], drift: &[f32]) -> f32 {
    // Per-lane minima (a float minimum does not vectorise as a single running value): sixteen
    // lanes, then eight (Elkan's bounds at k = 8 are one such register), then one at a time.
    let mut mins = [f32::INFINITY; 16];
    let (lc, lr) = lbs.as_chunks_mut::<16>();
    let (dc, dr) = drift.as_chunks::<16>();
    for (l, dg) in lc.iter_mut().zip(dc) {
        lower_lanes(l, dg, &mut mins);
    }
    let (lc8, lr) = lr.as_chunks_mut::<8>();
    let (dc8, dr) = dr.as_chunks::<8>();
    let mut mins8 = [f32::INFINITY; 8];
    for (l, dg) in lc8.iter_mut().zip(dc8) {
        lower_lanes(l, dg, &mut mins8);
    }
    for (i, (l, &dg)) in lr.iter_mut().zip(dr).enumerate() {
        lower_lanes(
            std::array::from_mut(l),
            &[dg],
            std::array::from_mut(&mut mins8[i]),
        );
    }
    for (m, &v) in mins.iter_mut().zip(&mins8) {
        *m = if v < *m { v } else { *m };
    }
    // Every bound is +0.0 or more (never -0.0 or NaN), so the smallest value is one set of bits.
    lanes_min(mins)
}

/// The smallest of sixteen values (none NaN), as a tree of lane-wise minima (one vector
/// operation per level).
#[inline(always)]
fn lanes_min_f64(v: [f64; EVERY_MAX_K]) -> f64 {
    let mut w = v;
    let mut n = EVERY_MAX_K / 2;
    while n > 0 {
        for l in 0..n {
            w[l] = if w[l + n] < w[l] { w[l + n] } else { w[l] };
        }
        n /= 2;
    }
    w[0]
}

/// [`lower_bounds`] on `W` lanes: each bound lowered by its drift, shrunk by a relative
/// `2^-21` and kept at 0 or more, and the lanes' minima updated.
#[inline(always)]
fn lower_lanes<const W: usize>(l: &mut [f32; W], dg: &[f32; W], mins: &mut [f32; W]) {
    let mut v = *l;
    for i in 0..W {
        let x = (v[i] - dg[i]) * DOWN32;
        v[i] = if x > 0.0 { x } else { 0.0 };
        mins[i] = if v[i] < mins[i] { v[i] } else { mins[i] };
    }
    *l = v;
}

/// A later step of a run: only the groups whose bounds fail, in stages on sub-blocks of
/// [`SUB`] rows (the functions below, in order).
#[inline(always)]
pub(super) fn pruned_leaf<T: Element>(
    input: LeafInput<'_, '_, T>,
    rows: LeafRows<'_>,
) -> StepStats {
    let LeafInput { x, d, weights, ctx } = input;
    let (k, t) = (ctx.cent.k, ctx.g.t);
    let exact = ctx.cent.method == Method::Direct;
    let n = rows.labels.len();
    // One centre per group (Elkan's bounds) and no far movers: each failing centre is one
    // distance, computed in place.
    let singletons = t == k && ctx.jump.is_empty();
    let mut st = StepStats::zeros(k, d);
    let mut q = if exact { Vec::new() } else { vec![0.0; k] };
    let mut p = Pruned {
        x,
        d,
        ctx,
        rows,
        b: PrunedScratch::new(t),
    };
    for sb in (0..n).step_by(SUB) {
        let m = SUB.min(n - sb);
        p.start_block(sb, m);
        let no = p.move_bounds(sb, m);
        let nf = p.check_own_centres(sb, no);
        if singletons {
            p.settle_singletons(sb, nf);
        } else {
            p.list_failing_groups(sb, nf);
        }
        if !p.b.pending.is_empty() {
            p.compute_failing_groups(sb);
            p.settle_pending(sb);
        }
        p.compute_full_rows(sb);
        p.add_rows((sb, m), weights, (&mut st, &mut q));
    }
    if !exact {
        st.inertia = formula_inertia(&st, &q, ctx.centroids, d);
    }
    ctx.evaluated.fetch_add(p.b.work, Ordering::Relaxed);
    st
}

/// A row of a step with one centre per group, few of them ([`StepCtx::every`]): the exact
/// distance to every centre at once ([`every_dist2`]), and the nearest by [`take`]'s rule;
/// every bound refreshed (`lbs`, the nearest's infinite: its group holds no other centre).
#[inline(always)]
fn every_row<T: Element>(xr: &[T], cent: &Centres<T>, lbs: &mut [f32]) -> (u32, f64) {
    // Lanes past `k` are infinitely far (`every_dist2`'s padding, or never written).
    let mut dist = [f64::INFINITY; EVERY_MAX_K];
    every_dist2(xr, cent, &mut dist);
    // The smallest distance, and of several equal ones the least caller index (the least
    // slot when the slots are in order), without a branch a centre.
    let m = lanes_min_f64(dist);
    let mut ties = 0u32;
    for (j, &v) in dist.iter().enumerate() {
        ties |= u32::from(v == m) << j;
    }
    // (Only the `k` centres: with every distance infinite, the padding ties too.)
    ties &= (1u32 << cent.k) - 1;
    let best = if ties.count_ones() == 1 || cent.in_order {
        (ties.trailing_zeros(), m)
    } else {
        let mut best = (u32::MAX, f64::INFINITY);
        while ties != 0 {
            let j = ties.trailing_zeros();
            ties &= ties - 1;
            take(cent, j, m, &mut best);
        }
        best
    };
    for (lb, &v) in lbs.iter_mut().zip(&dist) {
        *lb = bound_exact(v);
    }
    lbs[best.0 as usize] = f32::INFINITY;
    best
}

/// A row of a step with one centre per group and few centres ([`StepCtx::every`]) whose
/// failing centres are at least this many takes every centre at once ([`every_row`]): the
/// exact distances to the eight centres of a block, in the vector lanes, cost about what two
/// cost one at a time, and refresh every bound of the row. (With one failing centre, its one
/// distance costs less.)
const EVERY_MIN_FAILING: usize = 2;

/// A pruned leaf while it runs: its points, the step's context, its rows' labels and bounds,
/// and the scratch reused from one sub-block of [`SUB`] rows to the next. The stages below run
/// in order on each sub-block.
struct Pruned<'a, 'r, 'c, T> {
    x: &'a [T],
    d: usize,
    ctx: &'a StepCtx<'c, T>,
    rows: LeafRows<'r>,
    b: PrunedScratch<T>,
}

/// The scratch of a pruned leaf, reused from one sub-block of [`SUB`] rows to the next.
struct PrunedScratch<T> {
    s: Scratch<T>,
    /// Per row of the sub-block: its slot and exact squared distance, once known.
    done: Vec<(u32, f64)>,
    /// The points whose bounds failed, while their groups are computed.
    pending: Vec<Pending<T>>,
    /// (group, pending index) per failing group of a pending point, and their results.
    pairs: Vec<(u32, u32)>,
    results: Vec<PairResult>,
    /// The pairs sorted by group: `by_group[group_count[g]..group_count[g + 1]]`.
    by_group: Vec<u32>,
    group_count: Vec<usize>,
    /// Rows gathered for a matrix product, or their indices for the blocked products.
    gathered: Vec<T>,
    ridx: Vec<u32>,
    /// The rows of the sub-block whose bounds mostly failed (computed against every centre).
    full: Vec<u32>,
    /// Their group minima, incumbents, results and bounds, a tile at a time.
    gmin: Vec<T>,
    inc: [(u32, f64); TILE_ROWS],
    out: [(u32, f64); TILE_ROWS],
    tile_lbs: Vec<f32>,
    /// Far movers: the old bounds of the sub-block's points, and the far movers computed one
    /// by one.
    old_block: Vec<f32>,
    singles: Vec<(u32, f64)>,
    /// Per row of the sub-block: the least group bound (moved), and the rows still open.
    glbs: Vec<f64>,
    open: Vec<u32>,
    /// One centre per group: the failing centres of the row being settled, 64 a word.
    masks: Vec<u64>,
    /// Point-centre distances computed.
    work: u64,
}

impl<T: Element> PrunedScratch<T> {
    fn new(t: usize) -> Self {
        PrunedScratch {
            s: Scratch::new(),
            done: vec![(0u32, 0f64); SUB],
            pending: Vec::new(),
            pairs: Vec::new(),
            results: Vec::new(),
            by_group: Vec::new(),
            group_count: vec![0usize; t + 1],
            gathered: Vec::new(),
            ridx: Vec::new(),
            full: Vec::new(),
            gmin: Vec::new(),
            inc: [(0u32, 0f64); TILE_ROWS],
            out: [(0u32, 0f64); TILE_ROWS],
            tile_lbs: vec![0.0; TILE_ROWS * t],
            old_block: Vec::new(),
            singles: Vec::new(),
            glbs: vec![0f64; SUB],
            open: vec![0u32; SUB],
            masks: Vec::new(),
            work: 0,
        }
    }
}

impl<T: Element> Pruned<'_, '_, '_, T> {
    /// Starts the sub-block of `m` rows from `sb`: the lists emptied, the old bounds kept
    /// (far movers).
    #[inline(always)]
    fn start_block(&mut self, sb: usize, m: usize) {
        let t = self.ctx.g.t;
        let b = &mut self.b;
        b.pending.clear();
        b.pairs.clear();
        b.singles.clear();
        b.full.clear();
        if !self.ctx.jump.is_empty() {
            b.old_block.clear();
            b.old_block
                .extend_from_slice(&self.rows.lower[sb * t..(sb + m) * t]);
        }
    }

    /// Stage 1 of a pruned step, on the `m` rows of the sub-block from row `sb`: the bounds moved
    /// by the drifts, every row without a branch; the points they settle keep their label.
    /// (Separate passes rather than one with a data-dependent branch per row: about half the rows
    /// take it, so it mispredicts.) Returns how many rows are still open (`open[..no]`).
    #[inline(always)]
    fn move_bounds(&mut self, sb: usize, m: usize) -> usize {
        let (x, d, ctx, rows) = (self.x, self.d, self.ctx, &mut self.rows);
        let (g, t) = (ctx.g, ctx.g.t);
        let exact = ctx.cent.method == Method::Direct;
        let PrunedScratch {
            done, glbs, open, ..
        } = &mut self.b;
        let mut no = 0;
        for r in 0..m {
            let i = sb + r;
            // Most rows are settled by their bounds and read only by the sums below, some by
            // the next pass: load the rows ahead so neither read waits on memory.
            if let Some(ahead) = x.get((i + PREFETCH_ROWS) * d..(i + PREFETCH_ROWS + 1) * d) {
                prefetch_row(ahead);
            }
            let a = rows.labels[i] as usize;
            let sa = g.slot_of[a];
            let lbs = &mut rows.lower[i * t..(i + 1) * t];
            // Nothing nearer than the group bounds, or than half the gap to the nearest other
            // centre (Elkan's and Hamerly's test: then every other centre is farther).
            let glb = (lower_bounds(lbs, ctx.drift_group).max(ctx.half_gap[a])) as f64;
            glbs[r] = glb;
            done[r] = (sa, f64::NAN);
            // The direct path needs every exact distance (its inertia is exact); the product
            // path moves an upper bound (f32, as stored) and computes the distance only when
            // the bound does not settle the point.
            let settled = !exact && {
                let u32 = (rows.upper[i] + ctx.drift_centre[a]) * UP32;
                rows.upper[i] = u32;
                glb > u32 as f64 * (1.0 + SLACK)
            };
            open[no] = r as u32;
            no += usize::from(!settled);
        }
        no
    }

    /// Stage 2: the exact distance to the centre of the `no` rows still open; those it settles keep
    /// their label too. Returns how many rows are still open (`open[..nf]`).
    #[inline(always)]
    fn check_own_centres(&mut self, sb: usize, no: usize) -> usize {
        let (x, d, ctx, rows) = (self.x, self.d, self.ctx, &mut self.rows);
        let cent = ctx.cent;
        let exact = cent.method == Method::Direct;
        let PrunedScratch {
            done, glbs, open, ..
        } = &mut self.b;
        let mut nf = 0;
        for q in 0..no {
            let r = open[q] as usize;
            let i = sb + r;
            let sa = done[r].0;
            let d2a = dist2_f64(&x[i * d..(i + 1) * d], cent.row(sa as usize));
            let u32 = sqrt_up(d2a);
            done[r].1 = d2a;
            if !exact {
                rows.upper[i] = u32;
            }
            open[nf] = r as u32;
            nf += usize::from(glbs[r] <= u32 as f64 * (1.0 + SLACK));
        }
        nf
    }

    /// Stage 3: the groups of the `nf` rows still open: the rows whose failing groups hold most
    /// centres go to `full`, the others to `pending` with their failing groups (`pairs`); the far
    /// movers whose own bound fails are computed at once (`singles`).
    #[inline(always)]
    fn list_failing_groups(&mut self, sb: usize, nf: usize) {
        let (x, d, ctx, rows) = (self.x, self.d, self.ctx, &mut self.rows);
        let (cent, g) = (ctx.cent, ctx.g);
        let (k, t) = (cent.k, g.t);
        let far = !ctx.jump.is_empty();
        let PrunedScratch {
            done,
            pending,
            pairs,
            full,
            old_block,
            singles,
            open,
            work,
            ..
        } = &mut self.b;
        for &r in &open[..nf] {
            let r = r as usize;
            let i = sb + r;
            let xr = &x[i * d..(i + 1) * d];
            let (sa, d2a) = done[r];
            let lbs = &mut rows.lower[i * t..(i + 1) * t];
            let old = if far {
                &old_block[r * t..(r + 1) * t]
            } else {
                &[][..]
            };
            let u = sqrt_up(d2a) as f64;
            let bar = u * (1.0 + SLACK);
            // A group fails as a whole when its bound fails by the drift of its ordinary
            // centres (`fails`); otherwise only its far movers whose own bound fails.
            let jp = ctx.jump;
            let fails = |gg: usize, lb: f32| -> bool {
                if far {
                    moved_bound(old[gg], jp.drift_reg[gg]) as f64 <= bar
                } else {
                    lb as f64 <= bar
                }
            };
            let mut failing = 0;
            for (gg, &lb) in lbs.iter().enumerate() {
                if fails(gg, lb) {
                    failing += g.starts[gg + 1] - g.starts[gg];
                } else if far && lb as f64 <= bar {
                    for (sj, dj) in jp.of(gg) {
                        failing += usize::from(sj != sa && moved_bound(old[gg], dj) as f64 <= bar);
                    }
                }
            }
            if failing * FULL_SHARE > k {
                // Most centres to compute anyway: every centre, at full product speed.
                full.push(r as u32);
                continue;
            }
            let first = pairs.len();
            let first_single = singles.len();
            let mut best = (sa, d2a);
            for (gg, lb) in lbs.iter_mut().enumerate() {
                if fails(gg, *lb) {
                    pairs.push((gg as u32, pending.len() as u32));
                } else if far && *lb as f64 <= bar {
                    // The ordinary centres by their drift, each far mover by its own: the
                    // ones that fail are computed, the group's bound is the least of the rest
                    // (the computed ones are added once the label is known).
                    let mut nb = moved_bound(old[gg], jp.drift_reg[gg]);
                    for (sj, dj) in jp.of(gg) {
                        if sj == sa {
                            continue;
                        }
                        let b = moved_bound(old[gg], dj);
                        if b as f64 <= bar {
                            let d2 = dist2_f64(xr, cent.row(sj as usize));
                            singles.push((sj, d2));
                            take(cent, sj, d2, &mut best);
                            *work += 1;
                        } else if b < nb {
                            nb = b;
                        }
                    }
                    *lb = nb;
                }
            }
            pending.push(Pending {
                row: r,
                best,
                top: Band::new(T::zero()),
                xn2: f64::NAN,
                first,
                last: pairs.len(),
                singles: first_single..singles.len(),
            });
        }
    }

    /// Stage 3 where every group is one centre (Elkan's bounds, no far movers): each of the
    /// `nf` rows still open computes the centres whose bound fails, one exact distance each in
    /// place (no gathering, no product bands), takes the nearest by [`take`]'s rule and
    /// tightens those bounds. With few centres ([`StepCtx::every`]) a row with at least
    /// [`EVERY_MIN_FAILING`] failing takes every centre at once instead ([`every_row`]); else
    /// rows with more than `1 / FULL_SHARE` of the centres failing go to `full`.
    #[inline(always)]
    fn settle_singletons(&mut self, sb: usize, nf: usize) {
        let (x, d, ctx, rows) = (self.x, self.d, self.ctx, &mut self.rows);
        let cent = ctx.cent;
        let k = cent.k;
        let exact = cent.method == Method::Direct;
        let PrunedScratch {
            done,
            full,
            open,
            masks,
            work,
            ..
        } = &mut self.b;
        masks.resize(k.div_ceil(64), 0);
        for &r in &open[..nf] {
            let r = r as usize;
            let i = sb + r;
            let (sa, d2a) = done[r];
            let lbs = &mut rows.lower[i * k..(i + 1) * k];
            let bar = sqrt_up(d2a) as f64 * (1.0 + SLACK);
            // Slot `j` is group `j` (one centre each). A centre fails when its bound does
            // not exceed the distance to the point's centre: a bit mask, 64 centres a word,
            // built without branches.
            let mut failing = 0;
            for (w, (m, lw)) in masks.iter_mut().zip(lbs.chunks(64)).enumerate() {
                let mut bits = 0u64;
                for (b, &lb) in lw.iter().enumerate() {
                    bits |= u64::from(lb as f64 <= bar) << b;
                }
                if sa as usize / 64 == w {
                    bits &= !(1u64 << (sa % 64));
                }
                *m = bits;
                failing += bits.count_ones() as usize;
            }
            let xr = &x[i * d..(i + 1) * d];
            if ctx.every && failing >= EVERY_MIN_FAILING {
                let best = every_row(xr, cent, lbs);
                *work += k as u64;
                if !exact {
                    rows.upper[i] = sqrt_up(best.1);
                }
                done[r] = best;
                continue;
            }
            if failing * FULL_SHARE > k {
                full.push(r as u32);
                continue;
            }
            let mut best = (sa, d2a);
            for (w, &m) in masks.iter().enumerate() {
                let mut bits = m;
                while bits != 0 {
                    let j = w * 64 + bits.trailing_zeros() as usize;
                    bits &= bits - 1;
                    let d2 = dist2_f64(xr, cent.row(j));
                    take(cent, j as u32, d2, &mut best);
                    lbs[j] = bound_exact(d2);
                }
            }
            *work += failing as u64;
            if best.0 != sa {
                // The old centre is now an ordinary one.
                lbs[sa as usize] = bound_exact(d2a);
            }
            // The nearest centre's group holds no other centre.
            lbs[best.0 as usize] = f32::INFINITY;
            if !exact {
                rows.upper[i] = sqrt_up(best.1);
            }
            done[r] = best;
        }
    }

    /// Stage 4: the failing groups of the pending points, gathered per group (a counting sort of
    /// the pairs), each computed by blocked or matrix products or directly.
    #[inline(always)]
    fn compute_failing_groups(&mut self, sb: usize) {
        let (x, d, ctx) = (self.x, self.d, self.ctx);
        let (cent, g) = (ctx.cent, ctx.g);
        let t = g.t;
        let PrunedScratch {
            s,
            pending,
            pairs,
            results,
            by_group,
            group_count,
            gathered,
            ridx,
            work,
            ..
        } = &mut self.b;
        group_count.iter_mut().for_each(|c| *c = 0);
        for &(gg, _) in pairs.iter() {
            group_count[gg as usize + 1] += 1;
        }
        for gg in 0..t {
            group_count[gg + 1] += group_count[gg];
        }
        by_group.resize(pairs.len(), 0);
        {
            let mut next = group_count.clone();
            for (p, &(gg, _)) in pairs.iter().enumerate() {
                by_group[next[gg as usize]] = p as u32;
                next[gg as usize] += 1;
            }
        }
        results.resize(
            pairs.len(),
            PairResult {
                v1: 0.0,
                s1: 0,
                v2: 0.0,
                approx: false,
            },
        );
        for gg in 0..t {
            let list = &by_group[group_count[gg]..group_count[gg + 1]];
            if list.is_empty() {
                continue;
            }
            let range = g.range(gg);
            *work += (list.len() * range.len()) as u64;
            if g.gemm[gg] {
                // In blocks straight from the rows, or gathered for a matrix product.
                let blocked = ctx.blocks.has(gg);
                for tile in list.chunks(TILE_ROWS) {
                    gathered.clear();
                    s.xn2.clear();
                    ridx.clear();
                    for &p in tile {
                        let pe = &mut pending[pairs[p as usize].1 as usize];
                        let i = sb + pe.row;
                        let xr = &x[i * d..(i + 1) * d];
                        if pe.xn2.is_nan() {
                            pe.xn2 = norm2(xr);
                            pe.top = Band::new(cent.band_width(pe.xn2));
                        }
                        if blocked {
                            ridx.push(i as u32);
                        } else {
                            s.xn2.push(pe.xn2);
                            gathered.extend_from_slice(xr);
                        }
                    }
                    if blocked {
                        let rw = blocked_products(x, ridx, ctx.blocks, gg, s);
                        let norms = ctx.blocks.norms(gg);
                        for (&p, row) in tile.iter().zip(s.tile.chunks_exact(rw)) {
                            let pe = &mut pending[pairs[p as usize].1 as usize];
                            let (v1, s1, v2) = pe.top.merge_row(row, norms, range.start);
                            results[p as usize] = PairResult {
                                v1: v1.to_f64(),
                                s1,
                                v2: v2.to_f64(),
                                approx: true,
                            };
                        }
                        continue;
                    }
                    scan_product::<T, true>(gathered, cent, range.clone(), s);
                    for (q, &p) in tile.iter().enumerate() {
                        let band = &s.top[q];
                        results[p as usize] = PairResult {
                            v1: band.best.to_f64(),
                            s1: band.best_slot,
                            v2: band.second(band.best_slot).to_f64(),
                            approx: true,
                        };
                        pending[pairs[p as usize].1 as usize].top.merge(band);
                    }
                }
            } else {
                for &p in list {
                    let pe = &mut pending[pairs[p as usize].1 as usize];
                    let i = sb + pe.row;
                    let xr = &x[i * d..(i + 1) * d];
                    let ((s1, v1), v2) = nearest_two_direct(xr, cent, range.clone());
                    results[p as usize] = PairResult {
                        v1,
                        s1,
                        v2,
                        approx: false,
                    };
                    take(cent, s1, v1, &mut pe.best);
                }
            }
        }
    }

    /// Stage 5: the pending points' labels settled exactly, the bounds of the groups computed for
    /// them tightened.
    #[inline(always)]
    fn settle_pending(&mut self, sb: usize) {
        let (x, d, ctx, rows) = (self.x, self.d, self.ctx, &mut self.rows);
        let (cent, g) = (ctx.cent, ctx.g);
        let t = g.t;
        let exact = cent.method == Method::Direct;
        let PrunedScratch {
            done,
            pending,
            pairs,
            results,
            singles,
            ..
        } = &mut self.b;
        for pe in pending.iter() {
            let i = sb + pe.row;
            let xr = &x[i * d..(i + 1) * d];
            let (sa, d2a) = done[pe.row];
            let best = if pe.top.best_slot != u32::MAX {
                finish(xr, pe.xn2, &pe.top, cent, Some(pe.best)).unwrap_or_else(|| {
                    let mut b = pe.best;
                    for &(gg, _) in &pairs[pe.first..pe.last] {
                        exact_over(xr, cent, g.range(gg as usize), &mut b);
                    }
                    b
                })
            } else {
                pe.best
            };
            let lbs = &mut rows.lower[i * t..(i + 1) * t];
            let err = if pe.xn2.is_nan() {
                0.0
            } else {
                cent.err(pe.xn2)
            };
            let mut old_group_computed = false;
            let ga = g.group_of_slot[sa as usize];
            for (p, &(gg, _)) in pairs.iter().enumerate().take(pe.last).skip(pe.first) {
                let r = results[p];
                let other = if r.s1 == best.0 { r.v2 } else { r.v1 };
                lbs[gg as usize] = if r.approx {
                    bound_product(pe.xn2, other, err)
                } else {
                    bound_exact(other)
                };
                old_group_computed |= gg == ga;
            }
            for &(sj, d2) in &singles[pe.singles.clone()] {
                if sj != best.0 {
                    let lb = &mut lbs[g.group_of_slot[sj as usize] as usize];
                    let b = bound_exact(d2);
                    *lb = if b < *lb { b } else { *lb };
                }
            }
            if best.0 != sa && !old_group_computed {
                // The old centre is now an ordinary member of its group.
                let b = bound_exact(d2a);
                let lb = &mut lbs[ga as usize];
                *lb = if b < *lb { b } else { *lb };
            }
            if !exact {
                rows.upper[i] = sqrt_up(best.1);
            }
            done[pe.row] = best;
        }
    }

    /// The rows whose bounds mostly failed: every centre, in tiles, every bound refreshed.
    #[inline(always)]
    fn compute_full_rows(&mut self, sb: usize) {
        let (x, d, ctx, rows) = (self.x, self.d, self.ctx, &mut self.rows);
        let (k, t) = (ctx.cent.k, ctx.g.t);
        let exact = ctx.cent.method == Method::Direct;
        let PrunedScratch {
            s,
            done,
            gathered,
            full,
            gmin,
            inc,
            out,
            tile_lbs,
            work,
            ..
        } = &mut self.b;
        for tile in full.chunks(TILE_ROWS) {
            gathered.clear();
            for (q, &r) in tile.iter().enumerate() {
                let i = sb + r as usize;
                gathered.extend_from_slice(&x[i * d..(i + 1) * d]);
                inc[q] = done[r as usize];
            }
            let p = tile.len();
            full_tile(
                gathered,
                ctx,
                s,
                gmin,
                Some(&inc[..p]),
                &mut out[..p],
                &mut tile_lbs[..p * t],
            );
            for (q, &r) in tile.iter().enumerate() {
                let i = sb + r as usize;
                rows.lower[i * t..(i + 1) * t].copy_from_slice(&tile_lbs[q * t..(q + 1) * t]);
                if !exact {
                    rows.upper[i] = sqrt_up(out[q].1);
                }
                done[r as usize] = out[q];
            }
            *work += (p * k) as u64;
        }
    }

    /// The labels and sums of the sub-block's `m` rows from `sb`, in point order.
    #[inline(always)]
    fn add_rows(
        &mut self,
        (sb, m): (usize, usize),
        weights: Option<&[f64]>,
        (st, q): (&mut StepStats, &mut [f64]),
    ) {
        let (x, d, ctx, rows) = (self.x, self.d, self.ctx, &mut self.rows);
        let cent = ctx.cent;
        let exact = cent.method == Method::Direct;
        let done = &self.b.done;
        for (r, &(slot, d2)) in done.iter().enumerate().take(m) {
            let i = sb + r;
            let label = cent.id(slot);
            if rows.labels[i] != label {
                st.changed += 1;
                rows.labels[i] = label;
            }
            let w = weights.map_or(1.0, |w| w[i]);
            add_point(st, q, exact, &x[i * d..(i + 1) * d], w, label as usize, d2);
        }
    }
}
