//! Exact pruning of Lloyd's iteration: Hamerly, Yinyang and Elkan lower bounds over the
//! assignment engine ([`crate::assign`]).
//!
//! The centres are split into `t` groups (found by clustering the first centres of a run, as
//! Ding et al., "Yinyang K-Means", ICML 2015, do); every point keeps its label and, per group,
//! a lower bound on its distance to every centre of the group other than its own centre.
//! `t = 1` is Hamerly's algorithm (one bound: the second-nearest centre), `t = k` Elkan's (a
//! bound per centre), anything between Yinyang's. An iteration:
//!
//! 1. computes every point's exact distance to its centre (the inertia and the sums need it
//!    anyway);
//! 2. lowers each group bound by the largest distance a centre of the group moved;
//! 3. keeps the label of a point whose every group bound exceeds that distance;
//! 4. lists the other points by failing group and computes those groups only: with AVX-512,
//!    eight points at a time against the group's centres stored coordinate-major
//!    ([`crate::assign::blocked_products`], straight from the points' rows: at 100,000 x 256,
//!    k = 4,096 the second step took 0.89-0.94 s with gathered matrix products, 0.65-0.68 s
//!    so, Zen 4, 2 threads); otherwise one matrix product per tile of gathered points; or
//!    directly for small groups and dimensions. A point whose failing groups hold more than a
//!    third of the centres is computed against every centre, at full product speed;
//! 5. settles the label exactly as the engine does, with the old centre as the incumbent, and
//!    tightens the bounds of the groups it computed.
//!
//! **Deferred start.** Where a point has few, short distances (`k d` below
//! [`DEFER_BELOW_KD`]) the bounds cost more than they save while the centres still move far,
//! so a run takes plain Lloyd steps (the same statistics, bit for bit) until a step changes at
//! most 1 in [`DEFER_CHANGED_SHARE`] labels, and starts its bounds at the next step, from
//! centres that have settled (10^6 x 16 float64, k = 64: 20 iterations 1.00 -> 0.85 s;
//! 500,000 x 32, k = 256: 1.31 -> 0.85 s, the later steps' bounds being tighter too).
//!
//! **Far movers.** Early in a run a few centres move much farther than the rest of their
//! group (relocated empty clusters, clusters of a few points), and since a group bound drops
//! by its group's largest drift, they make their groups fail for every point. When the
//! largest eighth of the drifts is at least four times the rest in half the groups, those
//! centres are tested one by one ([`Jumpers`]): a failing point's group bound is lowered by the
//! drift of its ordinary centres only, each far mover's by its own drift, and only what still
//! fails is computed (at 100,000 x 256, k = 4,096 the fourth iteration: 25% -> 1.8% of the
//! distances, 0.9 -> 0.4 s on Zen 4). The pruned steps also load each point's row a few rows
//! ahead of its bound test, so the rows that the bounds settle do not wait on memory when the
//! sums read them.
//!
//! **Exactness.** Every bound is conservative: bounds are kept in `f32`, lower bounds shrunk and
//! upper bounds and drifts enlarged by a relative `2^-21` at every operation (more than the
//! rounding of the operation), and bounds from product values also by the engine's error
//! bound. A group is skipped only when its bound exceeds the distance to the point's centre by
//! a relative [`SLACK`], far more than the `f64` rounding of the reference distance. So every skipped centre is farther than the label,
//! in the reference's arithmetic too: the labels equal plain Lloyd's at every iteration, and
//! with the same summation tree the centroids, the inertia and the iteration count are the
//! same bits.
//!
//! **Memory.** `4 n t` bytes of bounds (plus the labels, `4 n`) for the run; per thread a few
//! tiles.

use std::sync::atomic::{AtomicU64, Ordering};

use rayon::prelude::*;

use crate::assign::{
    BLOCKED_MIN, Band, Centres, GroupBlocks, Method, STEP_TILE_ROWS, Scratch, TILE_CENTRES,
    TILE_ROWS, blocked_products, exact_over, finish, lanes_min, method_for, method_for_group,
    nearest_two_direct, norm2, row_norms, scan_product, scan_product_groups, sq_distances_tile,
    take,
};
use crate::cpu::{
    Rows, accumulate, accumulate_norm, block_rows, exact_inertia, formula_inertia, parallel_step,
    step_parallel, tree,
};
use crate::lloyd::{Candidate, StepStats, Stepper, dist2_f64, farthest_points};
use crate::{Element, KMeansError};

/// A group is skipped only when its bound exceeds the distance to the point's centre by this
/// relative margin.
pub(crate) const SLACK: f64 = 1e-9;
/// Rows whose failing groups are gathered together (bounded scratch per thread).
const SUB: usize = 2048;
/// A point whose failing groups hold more than `1 / FULL_SHARE` of the centres is computed
/// against every centre (one product at full speed, every bound refreshed).
const FULL_SHARE: usize = 3;
/// Lloyd iterations that group the centres of a run. Ding et al. run 5; 2 prune as well on
/// the FAISS benchmark's data (in the first five steps at 100,000 x 256, k = 4,096 and
/// 200,000 x 128, k = 1,024 the share of distances computed moved by at most 0.4 percentage
/// points) and save about 40 ms of `k t d` products at k = 4,096 (t = 256) in the first step.
const GROUPING_ITERATIONS: usize = 2;

/// Whether each step prints its time and work (`WARPATH_KMEANS_TRACE` set).
fn tracing() -> bool {
    std::env::var_os("WARPATH_KMEANS_TRACE").is_some()
}

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

/// The half gaps (`StepCtx::half_gap`) are computed when `k` is at most `n / HALF_GAP_SHARE`:
/// then their `k^2 d` work is at most 1/64 of a Lloyd iteration's.
const HALF_GAP_SHARE: usize = 64;

/// A lower bound on half the distance of every centroid to its nearest other centroid
/// (caller's order), from one tiled product of the centroids with themselves in `f64`.
fn half_gaps(centroids: &[f64], k: usize, d: usize) -> Vec<f32> {
    let method = if d >= 12 {
        Method::Gemm
    } else {
        Method::Direct
    };
    let cent = Centres::<f64>::new(centroids, k, d, None, method, false);
    let mut out = vec![0f32; k];
    // Tiles of centroids on the run's threads (each value depends on its row only): the
    // product is `k^2 d`, which at k = 1,024, d = 128 took 8 ms of every step on one thread.
    out.par_chunks_mut(TILE_ROWS)
        .zip(centroids.par_chunks(TILE_ROWS * d))
        .enumerate()
        .for_each_init(
            || (Scratch::new(), Vec::new()),
            |(s, dist), (b, (out, tile))| {
                sq_distances_tile(tile, &cent, s, dist);
                for (r, o) in out.iter_mut().enumerate() {
                    let i = b * TILE_ROWS + r;
                    let row = &dist[r * k..(r + 1) * k];
                    let mut m = f64::INFINITY;
                    for (j, &v) in row.iter().enumerate() {
                        if j != i && v < m {
                            m = v;
                        }
                    }
                    // Product values are within err of the exact ones (exact on the direct
                    // path).
                    let err = if method == Method::Gemm {
                        cent.err(tile[r * d..(r + 1) * d].iter().map(|v| v * v).sum())
                    } else {
                        0.0
                    };
                    *o = sqrt_down(m - err) * 0.5 * DOWN32;
                }
            },
        );
    out
}

/// `f32` factors that cover the rounding of a few `f32` operations (each at most `2^-24`
/// relative) with room to spare.
const UP32: f32 = 1.0 + 1.0 / (1 << 21) as f32;
const DOWN32: f32 = 1.0 - 1.0 / (1 << 21) as f32;

/// A lower bound on `sqrt(v)` in `f32` (0 for negative `v`): `v` rounded to `f32` and the
/// square root each err by at most half an ulp, which the factor covers. Branch-free, so
/// loops of it vectorise.
#[inline(always)]
fn sqrt_down(v: f64) -> f32 {
    let a = v as f32;
    let a = if a > 0.0 { a } else { 0.0 };
    a.sqrt() * DOWN32
}

/// An upper bound on `sqrt(v)` in `f32` (`v >= 0`).
#[inline(always)]
fn sqrt_up(v: f64) -> f32 {
    (v as f32).sqrt() * UP32
}

/// The bound implied by an exact squared distance (a distance of the reference's arithmetic,
/// whose own rounding is far below the factor of [`sqrt_down`]).
#[inline(always)]
fn bound_exact(d2: f64) -> f32 {
    sqrt_down(d2)
}

/// The bound implied by a product value `e` (a squared distance less `|x|^2`, within `err`).
#[inline(always)]
fn bound_product(xn2: f64, e: f64, err: f64) -> f32 {
    sqrt_down(xn2 + e - err)
}

/// The groups of centres of a run.
pub(crate) struct Groups {
    /// Number of (non-empty) groups.
    pub(crate) t: usize,
    /// The caller's index of the centre in each storage slot (groups contiguous).
    order: Vec<u32>,
    /// Group `g` is slots `starts[g]..starts[g + 1]`.
    starts: Vec<usize>,
    /// The group of each slot.
    group_of_slot: Vec<u32>,
    /// The slot of each centre (caller's index).
    slot_of: Vec<u32>,
    /// Whether each group is computed by matrix products (else directly).
    gemm: Vec<bool>,
}

impl Groups {
    /// At most `t` groups of the `k` centres: one group (`t = 1`), one per centre (`t >= k`),
    /// or the clusters of a few Lloyd iterations on the centres themselves, started from
    /// evenly spaced centres (deterministic). Empty groups are dropped; within a group the
    /// centres keep their order.
    fn new(centroids: &[f64], k: usize, d: usize, t: usize) -> Groups {
        let group_of: Vec<u32> = if t <= 1 {
            vec![0; k]
        } else if t >= k {
            (0..k as u32).collect()
        } else {
            let mut gc: Vec<f64> = (0..t)
                .flat_map(|g| {
                    let j = g * k / t;
                    centroids[j * d..(j + 1) * d].iter().copied()
                })
                .collect();
            let mut labels = vec![u32::MAX; k];
            for _ in 0..GROUPING_ITERATIONS {
                let st = step_parallel(centroids, d, None, &gc, t, &mut labels);
                for g in 0..t {
                    if st.counts[g] > 0.0 {
                        for u in 0..d {
                            gc[g * d + u] = st.sums[g * d + u] / st.counts[g];
                        }
                    }
                }
                if st.changed == 0 {
                    break;
                }
            }
            labels
        };
        // Renumber the non-empty groups in order and sort the slots by group.
        let mut count = vec![0usize; k.max(t) + 1];
        for &g in &group_of {
            count[g as usize] += 1;
        }
        let mut renumber = vec![u32::MAX; count.len()];
        let mut starts = vec![0usize];
        for (g, &c) in count.iter().enumerate() {
            if c > 0 {
                renumber[g] = (starts.len() - 1) as u32;
                starts.push(starts.last().expect("non-empty") + c);
            }
        }
        let t = starts.len() - 1;
        let mut next: Vec<usize> = starts[..t].to_vec();
        let mut order = vec![0u32; k];
        let mut slot_of = vec![0u32; k];
        let mut group_of_slot = vec![0u32; k];
        for (j, &g) in group_of.iter().enumerate() {
            let g = renumber[g as usize] as usize;
            let s = next[g];
            next[g] += 1;
            order[s] = j as u32;
            slot_of[j] = s as u32;
            group_of_slot[s] = g as u32;
        }
        let gemm = (0..t)
            .map(|g| method_for_group(d, starts[g + 1] - starts[g]) == Method::Gemm)
            .collect();
        Groups {
            t,
            order,
            starts,
            group_of_slot,
            slot_of,
            gemm,
        }
    }

    #[inline]
    fn range(&self, g: usize) -> std::ops::Range<usize> {
        self.starts[g]..self.starts[g + 1]
    }
}

/// The rows of one leaf: labels, upper bounds and lower bounds.
struct LeafRows<'s> {
    labels: &'s mut [u32],
    upper: &'s mut [f32],
    lower: &'s mut [f32],
    t: usize,
}

impl Rows for LeafRows<'_> {
    fn split_rows(self, at: usize) -> (Self, Self) {
        let (la, lb) = self.labels.split_at_mut(at);
        let (ua, ub) = self.upper.split_at_mut(at);
        let (wa, wb) = self.lower.split_at_mut(at * self.t);
        (
            LeafRows {
                labels: la,
                upper: ua,
                lower: wa,
                t: self.t,
            },
            LeafRows {
                labels: lb,
                upper: ub,
                lower: wb,
                t: self.t,
            },
        )
    }
}

/// What a leaf needs besides its rows: the centres of the step in both orders, the groups,
/// the drifts since the last step, and the work counter.
struct StepCtx<'c, T> {
    cent: &'c Centres<T>,
    /// The product groups in blocks ([`blocked_products`]).
    blocks: &'c GroupBlocks<T>,
    /// The centroids in the caller's order (for the inertia formula).
    centroids: &'c [f64],
    g: &'c Groups,
    /// Per group: the largest drift of its centres (rounded up).
    drift_group: &'c [f32],
    /// Per centre (caller's index): its drift (rounded up).
    drift_centre: &'c [f32],
    /// Per centre (caller's index): a lower bound on half its distance to the nearest other
    /// centre (0 when not computed). A point nearer its centre than that keeps it.
    half_gap: &'c [f32],
    /// The centres that moved far more than the rest of their group (see [`Jumpers`]).
    jump: &'c Jumpers,
    evaluated: &'c AtomicU64,
}

/// The centres of a step that moved far more than most (relocated empty clusters, small
/// clusters early in a run), tested one by one. A group's bound moves by the largest drift of
/// its centres, so one such centre makes the bound of its group fail for every point; its
/// group's other centres move by `drift_reg` only, and the far mover `j` by its own drift:
/// a point whose bound of the group fails by the whole drift is tested against `j` alone
/// (`old bound - drift_j`) and the rest (`old bound - drift_reg`), and computes only what
/// fails. Empty (`slot` empty) when it would not pay.
#[derive(Default)]
struct Jumpers {
    /// Per group: the largest drift of its centres that are not listed (rounded up).
    drift_reg: Vec<f32>,
    /// Group `g`'s far movers are `slot[start[g]..start[g + 1]]`, with drifts `drift`.
    start: Vec<usize>,
    slot: Vec<u32>,
    drift: Vec<f32>,
}

/// Below this `k d` a run starts its bounds only once a step changes at most
/// `1 / DEFER_CHANGED_SHARE` of the labels, running plain Lloyd steps until then: with few,
/// short distances per point, the bounds' upkeep costs more than it saves while the centres
/// still move far. Measured (`WARPATH_KMEANS_TRACE=1`, the FAISS benchmark's data, Zen 4, 2
/// threads): 10^6 x 16 float64, k = 64: a plain step 66 ms, the first step with bounds 90 ms
/// and the next four 78-110 ms (they compute 55-85% of the distances); at 100,000 x 256,
/// k = 4,096 the second step with bounds computes 33% of the distances, 0.84 s against 1.25
/// s plain, so large `k d` starts at once.
const DEFER_BELOW_KD: usize = 1 << 14;
/// See [`DEFER_BELOW_KD`].
const DEFER_CHANGED_SHARE: u64 = 20;

/// At most `1 / JUMP_SHARE` of the centres are tested one by one.
const JUMP_SHARE: usize = 8;

impl Jumpers {
    /// The far movers of a step: the largest `k / JUMP_SHARE` drifts (those above the rest),
    /// when the rest's largest drift is under a quarter of the whole in half the groups.
    fn new(g: &Groups, drift_centre: &[f32], drift_group: &[f32]) -> Jumpers {
        let k = drift_centre.len();
        let cap = k / JUMP_SHARE;
        if g.t >= k || cap == 0 {
            return Jumpers::default();
        }
        let mut sorted = drift_centre.to_vec();
        sorted.sort_unstable_by(f32::total_cmp);
        let theta = sorted[k - 1 - cap];
        let mut drift_reg = vec![0f32; g.t];
        for (j, &m) in drift_centre.iter().enumerate() {
            let gj = g.group_of_slot[g.slot_of[j] as usize] as usize;
            if m <= theta && m > drift_reg[gj] {
                drift_reg[gj] = m;
            }
        }
        let helped = drift_reg
            .iter()
            .zip(drift_group)
            .filter(|&(&r, &f)| 4.0 * r < f)
            .count();
        if 2 * helped < g.t {
            return Jumpers::default();
        }
        let mut start = vec![0usize; g.t + 1];
        let mut slot = Vec::new();
        let mut drift = Vec::new();
        for gg in 0..g.t {
            for s in g.range(gg) {
                let m = drift_centre[g.order[s] as usize];
                if m > theta {
                    slot.push(s as u32);
                    drift.push(m);
                }
            }
            start[gg + 1] = slot.len();
        }
        Jumpers {
            drift_reg,
            start,
            slot,
            drift,
        }
    }

    fn is_empty(&self) -> bool {
        self.slot.is_empty()
    }

    /// Group `gg`'s far movers: (slot, drift).
    #[inline(always)]
    fn of(&self, gg: usize) -> impl Iterator<Item = (u32, f32)> + '_ {
        let r = self.start[gg]..self.start[gg + 1];
        self.slot[r.clone()]
            .iter()
            .copied()
            .zip(self.drift[r].iter().copied())
    }
}

/// `(old - drift)` lowered by the rounding factor, at least 0 (as [`lower_bounds`]).
#[inline(always)]
fn moved_bound(old: f32, drift: f32) -> f32 {
    let x = (old - drift) * DOWN32;
    if x > 0.0 { x } else { 0.0 }
}

/// A CPU backend that prunes with group bounds (see the module docs).
pub(crate) struct BoundsStepper<'a, T> {
    pub(crate) data: &'a [T],
    pub(crate) d: usize,
    pub(crate) weights: Option<&'a [f64]>,
    pub(crate) labels: Vec<u32>,
    /// Global index of the first row (MPI shards).
    pub(crate) index_offset: u64,
    /// Groups asked for (at most `k` are used).
    groups_wanted: usize,
    upper: Vec<f32>,
    lower: Vec<f32>,
    groups: Option<Groups>,
    prev: Vec<f64>,
    /// Point-centre distances computed by the last step (products and direct), for reports.
    pub(crate) evaluated: AtomicU64,
    /// Far movers tested one by one in the last step ([`Jumpers`]).
    pub(crate) far_movers: usize,
    /// Whether the next step may be a plain Lloyd step, the bounds not started yet
    /// ([`DEFER_BELOW_KD`]).
    pub(crate) deferring: bool,
    /// [`Algorithm::Auto`](crate::Algorithm::Auto)'s policy: plain Lloyd steps until the
    /// labels settle, then the bounds for as long as a pruned step costs clearly less than a
    /// plain one (see [`ADAPTIVE_KEEP`]).
    adaptive: bool,
    /// The wall time of the last plain step (adaptive runs).
    plain_secs: f64,
    /// The bounds lost to plain steps in this run (adaptive runs): plain steps to its end.
    given_up: bool,
    /// Plain steps taken so far (adaptive runs wait for [`ADAPTIVE_DIRECT_MIN_PLAIN`]).
    plain_steps: usize,
    /// Tests: `plain_secs` is not measured.
    #[cfg(test)]
    pin_plain_secs: bool,
}

/// An adaptive run ([`BoundsStepper::adaptive`]) keeps its bounds while a pruned step takes at
/// most this share of the last plain step's time; past it, the run takes plain steps to its
/// end (the statistics are the same bits either way, only the time differs).
const ADAPTIVE_KEEP: f64 = 0.9;

/// An adaptive run whose bounds take exact distances on the direct path (fewer than a dozen
/// dimensions, [`method_for`]) starts them only after this many plain steps. The first
/// bounded step computes every point-centre distance exactly, which at such `d` costs some
/// 15-25 plain steps of the fused kernel, and a shorter run cannot earn that back from steps
/// that each save a fraction of a plain step: the rent-or-buy rule, rent until the rent paid
/// is about the price. Longer runs (a hundred steps and more on data without clusters) still
/// get the bounds for most of their steps.
const ADAPTIVE_DIRECT_MIN_PLAIN: usize = 20;

impl<'a, T: Element> BoundsStepper<'a, T> {
    /// A stepper with `groups` groups of centres (1: Hamerly, `k`: Elkan).
    pub(crate) fn new(data: &'a [T], d: usize, weights: Option<&'a [f64]>, groups: usize) -> Self {
        BoundsStepper {
            data,
            d,
            weights,
            labels: vec![u32::MAX; data.len() / d],
            index_offset: 0,
            groups_wanted: groups.max(1),
            upper: Vec::new(),
            lower: Vec::new(),
            groups: None,
            prev: Vec::new(),
            evaluated: AtomicU64::new(0),
            far_movers: 0,
            deferring: true,
            adaptive: false,
            plain_secs: f64::INFINITY,
            given_up: false,
            plain_steps: 0,
            #[cfg(test)]
            pin_plain_secs: false,
        }
    }

    /// The same stepper with [`Algorithm::Auto`](crate::Algorithm::Auto)'s policy: plain
    /// Lloyd steps until a step changes at most `1 / DEFER_CHANGED_SHARE` of the labels (for
    /// any `k d`), then the bounds, given up for the rest of the run after a pruned step that
    /// took more than [`ADAPTIVE_KEEP`] times the last plain step.
    pub(crate) fn adaptive(mut self, on: bool) -> Self {
        self.adaptive = on;
        self
    }

    /// Forgets the labels and bounds (a new run starts).
    pub(crate) fn reset(&mut self) {
        self.labels = vec![u32::MAX; self.data.len() / self.d];
        self.groups = None;
        self.upper = Vec::new();
        self.lower = Vec::new();
        self.prev.clear();
        self.deferring = true;
        self.plain_secs = f64::INFINITY;
        self.given_up = false;
    }

    /// Whether the bounds are running (tests), and whether they were given up.
    #[cfg(test)]
    pub(crate) fn bounds_state(&self) -> (bool, bool) {
        (self.groups.is_some(), self.given_up)
    }

    /// Takes every plain step to have lasted `secs` (tests: 0 makes the first pruned step
    /// give the bounds up).
    #[cfg(test)]
    pub(crate) fn force_plain_secs(&mut self, secs: f64) {
        self.plain_secs = secs;
        self.pin_plain_secs = true;
    }

    /// The bytes of bounds a run keeps for `n` points and `t` groups (upper and lower).
    pub(crate) fn bound_bytes(n: usize, t: usize) -> u64 {
        4 * n as u64 * (t as u64 + 1)
    }
}

impl<T: Element> Stepper for BoundsStepper<'_, T> {
    fn dim(&self) -> usize {
        self.d
    }

    fn step(&mut self, centroids: &[f64], k: usize) -> Result<StepStats, KMeansError> {
        let clock = std::time::Instant::now();
        let d = self.d;
        let n = self.labels.len();
        let parallel = parallel_step(n, k, d);
        self.evaluated.store(0, Ordering::Relaxed);
        let defer = self.deferring && (self.adaptive || k * d < DEFER_BELOW_KD);
        let renting = self.adaptive
            && method_for(d, k) == Method::Direct
            && self.plain_steps < ADAPTIVE_DIRECT_MIN_PLAIN;
        if self.given_up || ((defer || renting) && self.groups.is_none()) {
            // Plain Lloyd steps while many labels change, or for good once the bounds did not
            // pay (the same statistics, bit for bit).
            let stats = step_parallel(self.data, d, self.weights, centroids, k, &mut self.labels);
            #[cfg(test)]
            let pinned = self.pin_plain_secs;
            #[cfg(not(test))]
            let pinned = false;
            if !pinned {
                self.plain_secs = clock.elapsed().as_secs_f64();
            }
            self.deferring = stats.changed * DEFER_CHANGED_SHARE > n as u64;
            self.plain_steps += 1;
            self.evaluated.store((n * k) as u64, Ordering::Relaxed);
            self.far_movers = 0;
            if tracing() {
                eprintln!(
                    "step: {:.1} ms plain (bounds deferred), changed {}",
                    clock.elapsed().as_secs_f64() * 1e3,
                    stats.changed
                );
            }
            return Ok(stats);
        }
        let fresh = self.groups.is_none()
            || self.prev.len() != centroids.len()
            || self.labels.first() == Some(&u32::MAX);
        let mut drift_group = Vec::new();
        let mut drift_centre = Vec::new();
        if fresh {
            let g = Groups::new(centroids, k, d, self.groups_wanted.min(k));
            self.lower = vec![0f32; n * g.t];
            self.upper = vec![0f32; n];
            self.groups = Some(g);
        } else {
            let g = self.groups.as_ref().expect("groups of this run");
            drift_group = vec![0f32; g.t];
            drift_centre = (0..k)
                .map(|j| {
                    sqrt_up(dist2_f64(
                        &self.prev[j * d..(j + 1) * d],
                        &centroids[j * d..(j + 1) * d],
                    ))
                })
                .collect();
            for (j, &m) in drift_centre.iter().enumerate() {
                let gj = g.group_of_slot[g.slot_of[j] as usize] as usize;
                if m > drift_group[gj] {
                    drift_group[gj] = m;
                }
            }
        }
        let g = self.groups.as_ref().expect("groups of this run");
        // The other method's tables only when a group uses it.
        let method = method_for(d, k);
        let both = g.gemm.iter().any(|&p| p != (method == Method::Gemm));
        let cent = Centres::<T>::new(centroids, k, d, Some(&g.order), method, both);
        // The product groups of a later step, in blocks (the first step takes full products).
        let blocks = GroupBlocks::new(&cent, &g.starts, |gg| {
            let size = g.starts[gg + 1] - g.starts[gg];
            !fresh && g.gemm[gg] && (BLOCKED_MIN..=TILE_CENTRES).contains(&size)
        });
        let half_gap = if !fresh && k * HALF_GAP_SHARE <= n {
            half_gaps(centroids, k, d)
        } else {
            vec![0f32; k]
        };
        let jump = if fresh {
            Jumpers::default()
        } else {
            Jumpers::new(g, &drift_centre, &drift_group)
        };
        let ctx = StepCtx {
            cent: &cent,
            blocks: &blocks,
            centroids,
            g,
            drift_group: &drift_group,
            drift_centre: &drift_centre,
            half_gap: &half_gap,
            jump: &jump,
            evaluated: &self.evaluated,
        };
        let (data, weights) = (self.data, self.weights);
        let rows = LeafRows {
            labels: &mut self.labels,
            upper: &mut self.upper,
            lower: &mut self.lower,
            t: g.t,
        };
        let tables = clock.elapsed();
        let stats = tree(
            n,
            block_rows(n, k, d),
            parallel,
            rows,
            &|first, count, r| {
                let x = &data[first * d..(first + count) * d];
                let w = weights.map(|w| &w[first..first + count]);
                if fresh {
                    full_leaf(x, d, w, &ctx, r)
                } else {
                    pruned_leaf(x, d, w, &ctx, r)
                }
            },
        );
        self.prev.clear();
        self.prev.extend_from_slice(centroids);
        self.far_movers = jump.slot.len();
        if tracing() {
            eprintln!(
                "step: {:.1} ms (tables {:.1} ms) fresh {fresh} t {} far movers {} evaluated {:.4} of n k, changed {}",
                clock.elapsed().as_secs_f64() * 1e3,
                tables.as_secs_f64() * 1e3,
                g.t,
                jump.slot.len(),
                self.evaluated.load(Ordering::Relaxed) as f64 / (n * k) as f64,
                stats.changed
            );
        }
        if self.adaptive
            && !fresh
            && clock.elapsed().as_secs_f64() > ADAPTIVE_KEEP * self.plain_secs
        {
            // Pruning too little to pay: plain steps from now on, the bounds' memory freed.
            self.given_up = true;
            self.groups = None;
            self.lower = Vec::new();
            self.upper = Vec::new();
        }
        Ok(stats)
    }

    fn exact_inertia(&mut self, centroids: &[f64], k: usize) -> Result<Option<f64>, KMeansError> {
        Ok((method_for(self.d, k) == Method::Gemm)
            .then(|| exact_inertia(self.data, self.d, self.weights, centroids, k, &self.labels)))
    }

    fn farthest(&mut self, centroids: &[f64], m: usize) -> Result<Vec<Candidate>, KMeansError> {
        Ok(farthest_points(
            self.data,
            self.d,
            self.weights,
            centroids,
            &self.labels,
            m,
            self.index_offset,
        ))
    }
}

/// Adds a point to its cluster: with its exact distance (direct path), or to the norms of the
/// inertia formula (product path).
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn add_point<T: Element>(
    st: &mut StepStats,
    q: &mut [f64],
    exact: bool,
    x: &[T],
    w: f64,
    label: usize,
    d2: f64,
) {
    if exact {
        accumulate(st, x, w, label, d2);
    } else {
        accumulate_norm(st, q, x, w, label);
    }
}

isa_versions!(
    /// The first step of a run: every distance, and every bound set.
    fn full_leaf<T: Element>(
        x: &[T],
        d: usize,
        weights: Option<&[f64]>,
        ctx: &StepCtx<'_, T>,
        rows: LeafRows<'_>,
    ) -> StepStats => full_leaf_body;
);

#[inline(always)]
fn full_leaf_body<T: Element>(
    x: &[T],
    d: usize,
    weights: Option<&[f64]>,
    ctx: &StepCtx<'_, T>,
    rows: LeafRows<'_>,
) -> StepStats {
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
    // Direct path: the nearest and the second smallest of each group, to set its bound once
    // the label is known.
    let mut first = Vec::new();
    let mut second = Vec::new();
    if cent.method == Method::Direct {
        first.resize(t, (0u32, 0f64));
        second.resize(t, 0f64);
    }
    for (r, xr) in xt.chunks_exact(d).enumerate() {
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

isa_versions!(
    /// A later step of a run: only the groups whose bounds fail.
    fn pruned_leaf<T: Element>(
        x: &[T],
        d: usize,
        weights: Option<&[f64]>,
        ctx: &StepCtx<'_, T>,
        rows: LeafRows<'_>,
    ) -> StepStats => pruned_leaf_body;
);

#[inline(always)]
fn pruned_leaf_body<T: Element>(
    x: &[T],
    d: usize,
    weights: Option<&[f64]>,
    ctx: &StepCtx<'_, T>,
    rows: LeafRows<'_>,
) -> StepStats {
    let (cent, g) = (ctx.cent, ctx.g);
    let (k, t) = (cent.k, g.t);
    let exact = cent.method == Method::Direct;
    let n = rows.labels.len();
    let mut st = StepStats::zeros(k, d);
    let mut q = if exact { Vec::new() } else { vec![0.0; k] };
    let mut s = Scratch::new();
    let mut done = vec![(0u32, 0f64); SUB];
    let mut pending: Vec<Pending<T>> = Vec::new();
    // (group, pending index) per failing group of a pending point, and results.
    let mut pairs: Vec<(u32, u32)> = Vec::new();
    let mut results: Vec<PairResult> = Vec::new();
    let mut by_group: Vec<u32> = Vec::new();
    let mut group_count = vec![0usize; t + 1];
    let mut gathered: Vec<T> = Vec::new();
    let mut ridx: Vec<u32> = Vec::new();
    let mut full: Vec<u32> = Vec::new();
    let mut gmin: Vec<T> = Vec::new();
    let mut inc = [(0u32, 0f64); TILE_ROWS];
    let mut out = [(0u32, 0f64); TILE_ROWS];
    let mut tile_lbs: Vec<f32> = vec![0.0; TILE_ROWS * t];
    let mut work = 0u64;
    // Far movers: the old bounds of the sub-block's points, and the far movers computed one
    // by one.
    let far = !ctx.jump.is_empty();
    let mut old_block: Vec<f32> = Vec::new();
    let mut singles: Vec<(u32, f64)> = Vec::new();
    // Per row of the sub-block: the least group bound (moved), and the rows still open.
    let mut glbs = vec![0f64; SUB];
    let mut open = vec![0u32; SUB];
    for sb in (0..n).step_by(SUB) {
        let m = SUB.min(n - sb);
        pending.clear();
        pairs.clear();
        singles.clear();
        full.clear();
        if far {
            old_block.clear();
            old_block.extend_from_slice(&rows.lower[sb * t..(sb + m) * t]);
        }
        // 1: bounds moved by the drifts, every row without a branch; the points they settle
        // keep their label. (One pass with a data-dependent branch per row, which half the
        // rows took at 10^6 x 16, k = 64, cost 22 ns a row there; these three passes 15-17.)
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
        // 2: the exact distance to the centre of the rows still open; those it settles keep
        // their label too.
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
        // 3: the groups of the rows still open.
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
                            work += 1;
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
        if !pending.is_empty() {
            // 4: the failing groups, gathered per group (a counting sort of the pairs).
            group_count.iter_mut().for_each(|c| *c = 0);
            for &(gg, _) in &pairs {
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
                work += (list.len() * range.len()) as u64;
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
                            let rw = blocked_products(x, &ridx, ctx.blocks, gg, &mut s);
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
                        scan_product::<T, true>(&gathered, cent, range.clone(), &mut s);
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
            // 5: labels settled exactly, bounds of the computed groups tightened.
            for pe in &pending {
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
        // Points whose bounds mostly failed: every centre, in tiles.
        for tile in full.chunks(TILE_ROWS) {
            gathered.clear();
            for (q, &r) in tile.iter().enumerate() {
                let i = sb + r as usize;
                gathered.extend_from_slice(&x[i * d..(i + 1) * d]);
                inc[q] = done[r as usize];
            }
            let p = tile.len();
            full_tile(
                &gathered,
                ctx,
                &mut s,
                &mut gmin,
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
            work += (p * k) as u64;
        }
        // Labels and sums, in point order.
        for (r, &(slot, d2)) in done.iter().enumerate().take(m) {
            let i = sb + r;
            let label = cent.id(slot);
            if rows.labels[i] != label {
                st.changed += 1;
                rows.labels[i] = label;
            }
            let w = weights.map_or(1.0, |w| w[i]);
            add_point(
                &mut st,
                &mut q,
                exact,
                &x[i * d..(i + 1) * d],
                w,
                label as usize,
                d2,
            );
        }
    }
    if !exact {
        st.inertia = formula_inertia(&st, &q, ctx.centroids, d);
    }
    ctx.evaluated.fetch_add(work, Ordering::Relaxed);
    st
}
