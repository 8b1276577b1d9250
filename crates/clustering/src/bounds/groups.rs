//! The groups of centres of a run, the half gaps between centres, and the far movers of a
//! step (the centres tested one by one).

use rayon::prelude::*;

use super::{DOWN32, sqrt_down};
use crate::assign::{Centres, Method, Scratch, TILE_ROWS, method_for_group, sq_distances_tile};
use crate::cpu::step_parallel;

/// Lloyd iterations that group the centres of a run. Ding et al. run 5; 2 group the centres
/// about as well (the later steps prune as much) for less of the first step's `k t d`
/// products.
const GROUPING_ITERATIONS: usize = 2;

/// A lower bound on half the distance of every centroid to its nearest other centroid
/// (caller's order), from one tiled product of the centroids with themselves in `f64`.
pub(super) fn half_gaps(centroids: &[f64], k: usize, d: usize) -> Vec<f32> {
    let method = if d >= 12 {
        Method::Gemm
    } else {
        Method::Direct
    };
    let cent = Centres::<f64>::new(centroids, k, d, None, method, false);
    let mut out = vec![0f32; k];
    // Tiles of centroids on the run's threads (each value depends on its row only): the
    // product is `k^2 d`, too much for one thread at large `k`.
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

/// The groups of centres of a run.
pub(crate) struct Groups {
    /// Number of (non-empty) groups.
    pub(crate) t: usize,
    /// The caller's index of the centre in each storage slot (groups contiguous).
    pub(super) order: Vec<u32>,
    /// Group `g` is slots `starts[g]..starts[g + 1]`.
    pub(super) starts: Vec<usize>,
    /// The group of each slot.
    pub(super) group_of_slot: Vec<u32>,
    /// The slot of each centre (caller's index).
    pub(super) slot_of: Vec<u32>,
    /// Whether each group is computed by matrix products (else directly).
    pub(super) gemm: Vec<bool>,
}

impl Groups {
    /// At most `t` groups of the `k` centres: one group (`t = 1`), one per centre (`t >= k`),
    /// or the clusters of a few Lloyd iterations on the centres themselves, started from
    /// evenly spaced centres (deterministic). Empty groups are dropped; within a group the
    /// centres keep their order.
    pub(super) fn new(centroids: &[f64], k: usize, d: usize, t: usize) -> Groups {
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
                let st = step_parallel(centroids, d, (None, None, None), &gc, t, &mut labels);
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
    pub(super) fn range(&self, g: usize) -> std::ops::Range<usize> {
        self.starts[g]..self.starts[g + 1]
    }
}

/// The centres of a step that moved far more than most (relocated empty clusters, small
/// clusters early in a run), tested one by one. A group's bound moves by the largest drift of
/// its centres, so one such centre makes the bound of its group fail for every point; its
/// group's other centres move by `drift_reg` only, and the far mover `j` by its own drift:
/// a point whose bound of the group fails by the whole drift is tested against `j` alone
/// (`old bound - drift_j`) and the rest (`old bound - drift_reg`), and computes only what
/// fails. Empty (`slot` empty) when it would not pay.
#[derive(Default)]
pub(super) struct Jumpers {
    /// Per group: the largest drift of its centres that are not listed (rounded up).
    pub(super) drift_reg: Vec<f32>,
    /// Group `g`'s far movers are `slot[start[g]..start[g + 1]]`, with drifts `drift`.
    pub(super) start: Vec<usize>,
    pub(super) slot: Vec<u32>,
    pub(super) drift: Vec<f32>,
}

/// At most `1 / JUMP_SHARE` of the centres are tested one by one.
const JUMP_SHARE: usize = 8;

impl Jumpers {
    /// The far movers of a step: the largest `k / JUMP_SHARE` drifts (those above the rest),
    /// when the rest's largest drift is under a quarter of the whole in half the groups.
    pub(super) fn new(g: &Groups, drift_centre: &[f32], drift_group: &[f32]) -> Jumpers {
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

    pub(super) fn is_empty(&self) -> bool {
        self.slot.is_empty()
    }

    /// Group `gg`'s far movers: (slot, drift).
    #[inline(always)]
    pub(super) fn of(&self, gg: usize) -> impl Iterator<Item = (u32, f32)> + '_ {
        let r = self.start[gg]..self.start[gg + 1];
        self.slot[r.clone()]
            .iter()
            .copied()
            .zip(self.drift[r].iter().copied())
    }
}

/// `(old - drift)` lowered by the rounding factor, at least 0 (as `leaf::lower_bounds`).
#[inline(always)]
pub(super) fn moved_bound(old: f32, drift: f32) -> f32 {
    let x = (old - drift) * DOWN32;
    if x > 0.0 { x } else { 0.0 }
}
