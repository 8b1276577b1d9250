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
//!    ([`crate::assign::blocked_products`], straight from the points' rows, which saves
//!    gathering them); otherwise one matrix product per tile of gathered points; or directly
//!    for small groups and dimensions. A point whose failing groups hold more than a third of
//!    the centres is computed against every centre, at full product speed. With one centre
//!    per group (Elkan's bounds) a point's failing centres are a bit mask and each is one
//!    exact distance, computed in place without the lists;
//! 5. settles the label exactly as the engine does, with the old centre as the incumbent, and
//!    tightens the bounds of the groups it computed.
//!
//! **Deferred start.** Where a point has few, short distances (`k d` below
//! [`DEFER_BELOW_KD`]) the bounds cost more than they save while the centres still move far,
//! so a run takes plain Lloyd steps (the same statistics, bit for bit) until a step changes at
//! most 1 in [`DEFER_CHANGED_SHARE`] labels, and starts its bounds at the next step, from
//! centres that have settled (whose bounds are tighter too). `Algorithm::Auto`'s adaptive
//! runs defer so at every `k d`, and then start the bounds only where a forecast from a
//! sample of points (`forecast.rs`) says a pruned step would compute a small share of the
//! distances, choosing Yinyang's groups or Hamerly's single bound by the same forecast.
//!
//! **Far movers.** Early in a run a few centres move much farther than the rest of their
//! group (relocated empty clusters, clusters of a few points), and since a group bound drops
//! by its group's largest drift, they make their groups fail for every point. When the
//! largest eighth of the drifts is at least four times the rest in half the groups, those
//! centres are tested one by one (`Jumpers`): a failing point's group bound is lowered by the
//! drift of its ordinary centres only, each far mover's by its own drift, and only what still
//! fails is computed. The pruned steps also load each point's row a few rows ahead of its
//! bound test, so the rows that the bounds settle do not wait on memory when the sums read
//! them.
//!
//! **Exactness.** Every bound is conservative: bounds are kept in `f32`, lower bounds shrunk and
//! upper bounds and drifts enlarged by a relative `2^-21` at every operation (more than the
//! rounding of the operation), and bounds from product values also by the engine's error
//! bound. A group is skipped only when its bound exceeds the distance to the point's centre by
//! a relative [`SLACK`], far more than the `f64` rounding of the reference distance. So every
//! skipped centre is farther than the label, in the reference's arithmetic too: the labels
//! equal plain Lloyd's at every iteration, and with the same summation tree the centroids, the
//! inertia and the iteration count are the same bits.
//!
//! **Memory.** `4 n t` bytes of bounds (plus the labels, `4 n`) for the run; per thread a few
//! tiles.
//!
//! **Files.** This one holds the stepper (when to prune, the step's context) and the bounds'
//! arithmetic; `groups.rs` the groups of centres, the half gaps and the far movers;
//! `leaf.rs` a step's leaf and the first step of a run (every distance, every bound set);
//! `pruned.rs` a later step (only the failing groups), in named stages; `forecast.rs` what a
//! pruned step would compute, from a sample of points (adaptive runs).

use std::sync::atomic::{AtomicU64, Ordering};

use crate::assign::{
    BLOCKED_MIN, Centres, GroupBlocks, Method, TILE_CENTRES, every_serves, method_for,
};
use crate::cpu::{CpuKind, CpuStepper, Rows, block_rows, parallel_step, tree};
use crate::lloyd::{Candidate, StepStats, Stepper, dist2_f64};
use crate::{Element, KMeansError};

mod forecast;
mod groups;
mod leaf;
mod pruned;

use forecast::forecast;
use groups::{Groups, Jumpers, half_gaps};
use leaf::leaf;

/// A group is skipped only when its bound exceeds the distance to the point's centre by this
/// relative margin.
pub(crate) const SLACK: f64 = 1e-9;

/// Whether each step prints its time and work (`WARPATH_KMEANS_TRACE` set).
fn tracing() -> bool {
    std::env::var_os("WARPATH_KMEANS_TRACE").is_some()
}

/// The half gaps (`StepCtx::half_gap`) are computed when `k` is at most `n / HALF_GAP_SHARE`:
/// then their `k^2 d` work is at most 1/64 of a Lloyd iteration's.
const HALF_GAP_SHARE: usize = 64;

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
    /// The product groups in blocks ([`blocked_products`](crate::assign::blocked_products)).
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
    /// Whether a later step may take every centre of a row at once (one centre per group,
    /// few of them: [`every_serves`]; `cent` then holds the direct path's blocks).
    every: bool,
    evaluated: &'c AtomicU64,
}

/// Below this `k d` a run starts its bounds only once a step changes at most
/// `1 / DEFER_CHANGED_SHARE` of the labels, running plain Lloyd steps until then: with few,
/// short distances per point, the bounds' upkeep costs more than it saves while the centres
/// still move far. With large `k d` a run of an explicit pruned algorithm starts them at once;
/// [`Algorithm::Auto`](crate::Algorithm::Auto)'s adaptive runs wait for the labels to settle
/// at every `k d`, since a short fit may end before early bounds earn back their first steps.
const DEFER_BELOW_KD: usize = 1 << 14;
/// See [`DEFER_BELOW_KD`].
const DEFER_CHANGED_SHARE: u64 = 20;

/// A CPU backend that prunes with group bounds (see the module docs).
pub(crate) struct BoundsStepper<'a, T> {
    /// The points, weights and labels (the last step's), as a plain CPU stepper holds them:
    /// the far points and the exact inertia are its.
    pub(crate) plain: CpuStepper<'a, T>,
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
    /// labels settle, then the bounds for as long as a pruned step
    /// costs clearly less than a plain one (see [`ADAPTIVE_KEEP`]), tried again later when
    /// given up (see [`ADAPTIVE_RETRY_FACTOR`]).
    adaptive: bool,
    /// The shortest wall time of this run's plain steps (adaptive runs): the yardstick of
    /// the pruned steps. The shortest, since every plain step of a run does the same work and
    /// its wall time only grows with what else the machine does.
    plain_secs: f64,
    /// Pruned steps in a row that took more than [`ADAPTIVE_KEEP`] times `plain_secs`
    /// (adaptive runs give the bounds up at [`ADAPTIVE_SLOW_STEPS`]).
    slow_steps: usize,
    /// The bounds lost to plain steps (adaptive runs): plain steps until `resume_at`.
    given_up: bool,
    /// Plain steps taken so far in this run (adaptive runs wait for
    /// [`ADAPTIVE_DIRECT_MIN_PLAIN`], and retry given-up bounds at `resume_at`).
    plain_steps: usize,
    /// The plain step count at which given-up bounds are tried again (`usize::MAX`: never),
    /// unless a forecast finds them worth a retry earlier ([`RETRY_SHARE_DIVISOR`]).
    resume_at: usize,
    /// The share of the `n k` distances the step that gave the bounds up computed.
    failed_share: f64,
    /// Attempts at the bounds given up so far in this run: an adaptive run's odd attempts
    /// take one group (Hamerly's bound), its even ones `groups_wanted` groups or one,
    /// whichever the forecast has compute less.
    attempts: usize,
    /// What the current attempt has cost beyond plain steps, in plain steps (net of what
    /// its pruned steps saved).
    attempt_extra: f64,
    /// The plain step count from which an adaptive run may forecast its bounds again, after a
    /// forecast that they would not pay ([`FORECAST_WAIT`]).
    forecast_at: usize,
    /// Whether the last step's forecast said the bounds pay (a run starts them after two in a
    /// row, [`forecast_groups`](Self::forecast_groups)).
    forecast_passed: bool,
    /// Tests: the forecast's verdict, not computed.
    #[cfg(test)]
    pin_forecast: Option<bool>,
    /// Tests: `plain_secs` is not measured.
    #[cfg(test)]
    pin_plain_secs: bool,
    /// Tests: given-up bounds are retried after this many plain steps.
    #[cfg(test)]
    pin_retry: Option<usize>,
}

/// An adaptive run ([`BoundsStepper::adaptive`]) keeps its bounds while its pruned steps take
/// at most this share of its shortest plain step's time; after [`ADAPTIVE_SLOW_STEPS`] slower
/// ones in a row it takes plain steps until a retry (the statistics are the same bits either
/// way, only the time differs).
const ADAPTIVE_KEEP: f64 = 0.9;

/// Pruned steps in a row slower than [`ADAPTIVE_KEEP`] allows before an adaptive run gives its
/// bounds up: one slow step is as often the machine's noise as the bounds' cost.
const ADAPTIVE_SLOW_STEPS: usize = 2;

/// An adaptive run whose bounds take exact distances on the direct path (fewer than a dozen
/// dimensions, [`method_for`]) starts them only after this many plain steps. The first
/// bounded step computes every point-centre distance exactly (with the group bounds), which
/// at such `d` costs several plain steps, and a short run cannot earn that back from steps
/// that each save a fraction of a plain step: the rent-or-buy rule, rent until the rent paid
/// covers the price. Longer runs (a hundred steps and more on data without clusters) still
/// get the bounds for most of their steps.
const ADAPTIVE_DIRECT_MIN_PLAIN: usize = 20;

/// An adaptive run that gave its bounds up tries them again (the other kind: Hamerly's one
/// bound after Yinyang's groups, and back) once it has taken this many times as many plain
/// steps as the failed attempt cost it beyond plain steps: rent-or-buy again, so that retries
/// cost at most about `1 / ADAPTIVE_RETRY_FACTOR` of the run. Bounds that lose early, while
/// the centres still move far, often win later, when few labels change; which kind wins
/// depends on `d` and on how far the run has come (Hamerly's single bound costs less upkeep
/// and prunes less).
const ADAPTIVE_RETRY_FACTOR: f64 = 20.0;

/// An adaptive run that gave its bounds up after pruned steps computing a share `s` of the
/// distances retries them before its rent-or-buy wait ([`ADAPTIVE_RETRY_FACTOR`]) is over when
/// a forecast (one every [`FORECAST_WAIT`] plain steps) has the next kind compute at most
/// `s / RETRY_SHARE_DIVISOR`: on data with clusters the share keeps falling as the centres
/// settle, and a pruned step's cost falls with it, well before the wait ends.
const RETRY_SHARE_DIVISOR: f64 = 4.0;

/// An adaptive run starts (or retries) its bounds only when [`forecast`] says a pruned step
/// would compute at most this share of the `n k` distances. A pruned step computes its
/// distances with more upkeep than a plain step (gathered groups, every bound of a point
/// refreshed) and the plain step may run the bfloat16 pass at twice the multiply-add rate,
/// so a third of the distances already costs about a plain step.
const FORECAST_MAX_SHARE: f64 = 0.3;

/// Plain steps an adaptive run waits after a forecast that its bounds would not pay before
/// it forecasts again (each forecast costs a few hundred points' distances).
const FORECAST_WAIT: usize = 4;

/// Yinyang's groups are chosen over Hamerly's single bound when the forecast has them
/// compute at most this share of what the single bound would (the groups cost upkeep per
/// group and point).
const FORECAST_GROUPS_GAIN: f64 = 0.6;

impl<'a, T: Element> BoundsStepper<'a, T> {
    /// A stepper with `groups` groups of centres (1: Hamerly, `k`: Elkan).
    pub(crate) fn new(data: &'a [T], d: usize, weights: Option<&'a [f64]>, groups: usize) -> Self {
        BoundsStepper {
            plain: CpuStepper::new(data, d, weights, CpuKind::Parallel),
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
            slow_steps: 0,
            given_up: false,
            plain_steps: 0,
            resume_at: usize::MAX,
            failed_share: 0.0,
            attempts: 0,
            attempt_extra: 0.0,
            forecast_at: 0,
            forecast_passed: false,
            #[cfg(test)]
            pin_forecast: None,
            #[cfg(test)]
            pin_plain_secs: false,
            #[cfg(test)]
            pin_retry: None,
        }
    }

    /// The same stepper with [`Algorithm::Auto`](crate::Algorithm::Auto)'s policy: plain
    /// Lloyd steps until a step changes at most `1 / DEFER_CHANGED_SHARE` of the labels (at
    /// every `k d`), then the bounds once two forecasts in a row say they pay
    /// ([`FORECAST_MAX_SHARE`]), given up after [`ADAPTIVE_SLOW_STEPS`] pruned steps in a row
    /// that took more than [`ADAPTIVE_KEEP`] times the shortest plain step, and tried again
    /// when a forecast says they prune far more ([`RETRY_SHARE_DIVISOR`]), at the latest after
    /// [`ADAPTIVE_RETRY_FACTOR`] times what the attempt cost (again when forecast to pay).
    pub(crate) fn adaptive(mut self, on: bool) -> Self {
        self.adaptive = on;
        self
    }

    /// Forgets the labels and bounds (a new run starts).
    pub(crate) fn reset(&mut self) {
        self.plain.reset_labels();
        self.groups = None;
        self.upper = Vec::new();
        self.lower = Vec::new();
        self.prev.clear();
        self.deferring = true;
        self.plain_secs = f64::INFINITY;
        self.slow_steps = 0;
        self.given_up = false;
        self.plain_steps = 0;
        self.resume_at = usize::MAX;
        self.failed_share = 0.0;
        self.attempts = 0;
        self.attempt_extra = 0.0;
        self.forecast_at = 0;
        self.forecast_passed = false;
    }

    /// Takes every forecast to say the bounds pay (`true`) or not, without computing it
    /// (tests).
    #[cfg(test)]
    pub(crate) fn force_forecast(&mut self, pays: bool) {
        self.pin_forecast = Some(pays);
    }

    /// Whether the bounds are running (tests), and whether they were given up.
    #[cfg(test)]
    pub(crate) fn bounds_state(&self) -> (bool, bool) {
        (self.groups.is_some(), self.given_up)
    }

    /// Attempts at the bounds given up so far in this run (tests).
    #[cfg(test)]
    pub(crate) fn attempts(&self) -> usize {
        self.attempts
    }

    /// Plain steps taken so far in this run (tests).
    #[cfg(test)]
    pub(crate) fn plain_steps(&self) -> usize {
        self.plain_steps
    }

    /// Retries given-up bounds after `steps` plain steps (tests).
    #[cfg(test)]
    pub(crate) fn force_retry_after(&mut self, steps: usize) {
        self.pin_retry = Some(steps);
    }

    /// The groups of the current attempt: `groups_wanted`, or one (Hamerly's bound) on an
    /// adaptive run's odd attempts.
    fn groups_now(&self) -> usize {
        if self.adaptive && self.attempts % 2 == 1 {
            1
        } else {
            self.groups_wanted
        }
    }

    /// A plain Lloyd step while many labels change, or for good once the bounds did not pay
    /// (the same statistics, bit for bit), by the plain stepper, which keeps what its kernel
    /// computes once per fit (the rows' norms, their packing); `clock` started with the step.
    fn plain_step(
        &mut self,
        centroids: &[f64],
        k: usize,
        clock: std::time::Instant,
    ) -> Result<StepStats, KMeansError> {
        let n = self.plain.labels.len();
        let stats = self.plain.step(centroids, k)?;
        if self.adaptive {
            // The drifts of the next forecast.
            self.prev.clear();
            self.prev.extend_from_slice(centroids);
        }
        #[cfg(test)]
        let pinned = self.pin_plain_secs;
        #[cfg(not(test))]
        let pinned = false;
        if !pinned {
            self.plain_secs = self.plain_secs.min(clock.elapsed().as_secs_f64());
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
        Ok(stats)
    }

    /// The groups an adaptive run starts its bounds with at this step (Yinyang's or
    /// Hamerly's single bound, whichever [`forecast`] has compute less), or `None` when the
    /// forecast says a pruned step would compute more than [`FORECAST_MAX_SHARE`] of the
    /// distances, or is not due ([`FORECAST_WAIT`]) or possible (no last step's centroids):
    /// then the step is a plain one.
    ///
    /// The bounds start at the second forecast in a row that says they pay, after one more
    /// plain step: their first step costs about a plain step more than a plain one, which a
    /// run that ends a step or two later (labels that settle as the centroids stop, as in
    /// data with clusters) never earns back; a longer run gives up one step's savings
    /// (rent-or-buy: rent one step before buying).
    fn forecast_groups(&mut self, centroids: &[f64], k: usize) -> Option<Groups> {
        let d = self.plain.d;
        if !self.forecast_due(centroids) {
            return None;
        }
        let wanted = self.groups_now().min(k);
        #[cfg(test)]
        if let Some(pays) = self.pin_forecast {
            return pays.then(|| Groups::new(centroids, k, d, wanted));
        }
        let clock = std::time::Instant::now();
        let g = Groups::new(centroids, k, d, wanted);
        let grouped = clock.elapsed();
        let f = forecast(self.plain.data, d, centroids, &self.prev, k, &g);
        let one = f.groups > FORECAST_GROUPS_GAIN * f.one && g.t > 1;
        let share = if one { f.one } else { f.groups };
        if tracing() {
            eprintln!(
                "forecast: {:.2} ms (groups {:.2} ms): groups {:.3}, one bound {:.3} of n k: {}",
                clock.elapsed().as_secs_f64() * 1e3,
                grouped.as_secs_f64() * 1e3,
                f.groups,
                f.one,
                if share > FORECAST_MAX_SHARE {
                    "plain steps"
                } else if one {
                    "one bound"
                } else {
                    "groups"
                }
            );
        }
        if share > FORECAST_MAX_SHARE {
            self.forecast_at = self.plain_steps + FORECAST_WAIT;
            self.forecast_passed = false;
            return None;
        }
        if !std::mem::replace(&mut self.forecast_passed, true) {
            return None;
        }
        self.forecast_passed = false;
        Some(if one {
            Groups::new(centroids, k, d, 1)
        } else {
            g
        })
    }

    /// Whether a forecast is due ([`FORECAST_WAIT`] after a declined one) and possible (the
    /// last step's centroids, whose drifts it needs, are kept).
    fn forecast_due(&self, centroids: &[f64]) -> bool {
        self.plain_steps >= self.forecast_at && self.prev.len() == centroids.len()
    }

    /// Whether given-up bounds are worth a retry before their wait is over: a forecast (when
    /// due, [`FORECAST_WAIT`]) has the kind the retry takes compute at most
    /// `1 / RETRY_SHARE_DIVISOR` of the share the failed attempt computed. A passing forecast
    /// counts as the first of the two a start needs ([`forecast_groups`](Self::forecast_groups)).
    fn retry_forecast(&mut self, centroids: &[f64], k: usize) -> bool {
        if !self.forecast_due(centroids) {
            return false;
        }
        #[cfg(test)]
        if let Some(pays) = self.pin_forecast {
            return pays;
        }
        let d = self.plain.d;
        let g = Groups::new(centroids, k, d, self.groups_now().min(k));
        let f = forecast(self.plain.data, d, centroids, &self.prev, k, &g);
        let share = f.groups.min(f.one);
        let retry = share * RETRY_SHARE_DIVISOR <= self.failed_share;
        if tracing() {
            eprintln!(
                "retry forecast: {share:.4} of n k against {:.4} failed: {}",
                self.failed_share,
                if retry { "retry" } else { "wait" }
            );
        }
        // A retry forecasts again at the next step (the second pass it needs), a wait in
        // `FORECAST_WAIT` steps.
        self.forecast_at = self.plain_steps + if retry { 1 } else { FORECAST_WAIT };
        self.forecast_passed = retry;
        retry
    }

    /// Adds a bounded step of `secs` to the current attempt's cost (adaptive runs).
    fn charge(&mut self, secs: f64) {
        self.attempt_extra += if self.plain_secs > 0.0 {
            (secs - self.plain_secs) / self.plain_secs
        } else {
            f64::INFINITY
        };
    }

    /// Gives the bounds up (adaptive runs): plain steps, the bounds' memory freed, a retry
    /// planned ([`ADAPTIVE_RETRY_FACTOR`]).
    fn give_up(&mut self, share: f64) {
        self.given_up = true;
        self.failed_share = share;
        self.slow_steps = 0;
        self.groups = None;
        self.lower = Vec::new();
        self.upper = Vec::new();
        let wait = ADAPTIVE_RETRY_FACTOR * self.attempt_extra.max(1.0);
        #[cfg(test)]
        let wait = self.pin_retry.map_or(wait, |s| s as f64);
        self.resume_at = if wait.is_finite() {
            self.plain_steps.saturating_add(wait.ceil() as usize)
        } else {
            usize::MAX
        };
        self.attempts += 1;
        self.attempt_extra = 0.0;
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
        self.plain.d
    }

    fn step(&mut self, centroids: &[f64], k: usize) -> Result<StepStats, KMeansError> {
        let clock = std::time::Instant::now();
        let d = self.plain.d;
        let n = self.plain.labels.len();
        if self.given_up
            && (self.plain_steps >= self.resume_at || self.retry_forecast(centroids, k))
        {
            // Time to try the bounds again (a fresh step below, the other kind).
            self.given_up = false;
        }
        let parallel = parallel_step(n, k, d);
        self.evaluated.store(0, Ordering::Relaxed);
        // Adaptive runs defer the bounds by the changed labels at any `k d`: their plain
        // steps are the yardstick of the pruned ones, and while many labels change a bounded
        // step evaluates every distance and costs more than a plain one.
        let defer = self.deferring && (k * d < DEFER_BELOW_KD || self.adaptive);
        let renting = self.adaptive
            && method_for(d, k) == Method::Direct
            && self.plain_steps < ADAPTIVE_DIRECT_MIN_PLAIN;
        let mut plain = self.given_up || ((defer || renting) && self.groups.is_none());
        let mut chosen = None;
        if self.adaptive && !plain && self.groups.is_none() {
            // The bounds would start now: only where the forecast says they pay.
            chosen = self.forecast_groups(centroids, k);
            plain = chosen.is_none();
        }
        if plain {
            return self.plain_step(centroids, k, clock);
        }
        let fresh = self.groups.is_none()
            || self.prev.len() != centroids.len()
            || self.plain.labels.first() == Some(&u32::MAX);
        let mut drift_group = Vec::new();
        let mut drift_centre = Vec::new();
        if fresh {
            let g =
                chosen.unwrap_or_else(|| Groups::new(centroids, k, d, self.groups_now().min(k)));
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
        let every = !fresh && g.t == k && every_serves(k, d);
        let cent = Centres::<T>::new(centroids, k, d, Some(&g.order), method, both);
        let cent = if every { cent.with_blocks() } else { cent };
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
            every,
            evaluated: &self.evaluated,
        };
        let (data, weights) = (self.plain.data, self.plain.weights);
        let rows = LeafRows {
            labels: &mut self.plain.labels,
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
                leaf(x, d, w, &ctx, r, fresh)
            },
        );
        self.prev.clear();
        self.prev.extend_from_slice(centroids);
        self.far_movers = jump.slot.len();
        if tracing() {
            eprintln!(
                "step: {:.1} ms (tables {:.1} ms) fresh {fresh} t {} far movers {} evaluated {:.4} of n k, changed {}, attempt {}",
                clock.elapsed().as_secs_f64() * 1e3,
                tables.as_secs_f64() * 1e3,
                g.t,
                jump.slot.len(),
                self.evaluated.load(Ordering::Relaxed) as f64 / (n * k) as f64,
                stats.changed,
                self.attempts
            );
        }
        if self.adaptive {
            let secs = clock.elapsed().as_secs_f64();
            self.charge(secs);
            if fresh {
                self.slow_steps = 0;
            } else if secs > ADAPTIVE_KEEP * self.plain_secs {
                self.slow_steps += 1;
                if self.slow_steps >= ADAPTIVE_SLOW_STEPS {
                    // Pruning too little to pay: plain steps until the retry.
                    let share = self.evaluated.load(Ordering::Relaxed) as f64 / (n * k) as f64;
                    self.give_up(share);
                }
            } else {
                self.slow_steps = 0;
            }
        }
        Ok(stats)
    }

    fn exact_inertia(&mut self, centroids: &[f64], k: usize) -> Result<Option<f64>, KMeansError> {
        Ok((method_for(self.plain.d, k) == Method::Gemm)
            .then(|| self.plain.labels_inertia(centroids, k)))
    }

    fn farthest(&mut self, centroids: &[f64], m: usize) -> Result<Vec<Candidate>, KMeansError> {
        self.plain.farthest(centroids, m)
    }
}
