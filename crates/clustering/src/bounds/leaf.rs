//! The leaves of a bounded step: the first step of a run (every distance, every bound set)
//! and a later one (only the groups whose bounds fail).

use std::sync::atomic::Ordering;

use super::groups::{Groups, moved_bound};
use super::{
    DOWN32, LeafRows, SLACK, StepCtx, UP32, bound_exact, bound_product, sqrt_down, sqrt_up,
};
use crate::Element;
use crate::assign::lanes_by_d;
use crate::assign::{
    Band, Lanes2, Method, POINT_LANES, STEP_TILE_ROWS, Scratch, TILE_ROWS, blocked_products,
    exact_over, finish, lanes_min, nearest_two_direct, nearest_two8, norm2, row_norms,
    scan_product, scan_product_groups, take, transpose8,
};
use crate::cpu::{add_point, formula_inertia};
use crate::lloyd::{StepStats, dist2_f64};

/// Rows whose failing groups are gathered together (bounded scratch per thread).
const SUB: usize = 2048;
/// A point whose failing groups hold more than `1 / FULL_SHARE` of the centres is computed
/// against every centre (one product at full speed, every bound refreshed).
const FULL_SHARE: usize = 3;

/// How many rows ahead of its bound tests a pruned step loads the points.
const PREFETCH_ROWS: usize = 8;

/// Asks the core to load the cache lines of `row` ([`gpu_primitives::prefetch`], one per 64
/// bytes).
#[inline(always)]
fn prefetch_row<T>(row: &[T]) {
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
    ) -> StepStats => leaf_body;
);

#[inline(always)]
fn leaf_body<T: Element>(
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

/// What a leaf reads: its points (`d` columns) and their weights, and the step's context.
struct LeafInput<'a, 'c, T> {
    x: &'a [T],
    d: usize,
    weights: Option<&'a [f64]>,
    ctx: &'a StepCtx<'c, T>,
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
fn full_tile<T: Element>(
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
    let mut v = band.floor().to_f64();
    for i in 0..band.len as usize {
        let s = band.slot[i];
        if s != slot && g.group_of_slot[s as usize] as usize == gl {
            v = v.min(band.val[i].to_f64());
        }
    }
    v
}

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
    const W: usize = 16;
    // Per-lane minima (a float minimum does not vectorise as a single running value).
    let mut mins = [f32::INFINITY; W];
    let (lc, lr) = lbs.as_chunks_mut::<W>();
    let (dc, dr) = drift.as_chunks::<W>();
    for (l, dg) in lc.iter_mut().zip(dc) {
        let mut v = *l;
        for i in 0..W {
            let x = (v[i] - dg[i]) * DOWN32;
            v[i] = if x > 0.0 { x } else { 0.0 };
            mins[i] = if v[i] < mins[i] { v[i] } else { mins[i] };
        }
        *l = v;
    }
    for (i, (l, &dg)) in lr.iter_mut().zip(dr).enumerate() {
        let x = (*l - dg) * DOWN32;
        *l = if x > 0.0 { x } else { 0.0 };
        mins[i] = if *l < mins[i] { *l } else { mins[i] };
    }
    // Every bound is +0.0 or more (never -0.0 or NaN), so the smallest value is one set of bits.
    lanes_min(mins)
}

/// A later step of a run: only the groups whose bounds fail, in stages on sub-blocks of
/// [`SUB`] rows (the functions below, in order).
#[inline(always)]
fn pruned_leaf<T: Element>(input: LeafInput<'_, '_, T>, rows: LeafRows<'_>) -> StepStats {
    let LeafInput { x, d, weights, ctx } = input;
    let (k, t) = (ctx.cent.k, ctx.g.t);
    let exact = ctx.cent.method == Method::Direct;
    let n = rows.labels.len();
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
        p.list_failing_groups(sb, nf);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::assign::{Centres, GroupBlocks};
    use crate::bounds::groups::Jumpers;
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
