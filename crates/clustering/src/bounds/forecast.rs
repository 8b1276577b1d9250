//! How much a pruned step would compute, forecast from a sample of points before an adaptive
//! run pays for its bounds.
//!
//! The first bounded step of a run costs more than a plain step (every distance, every bound
//! set), and the bounds pay only if the steps after it skip most distances. Whether they do
//! depends on the data (points near many centres, as in data without clusters in many
//! dimensions, fail their bounds at every step), so an adaptive run measures it first: for a
//! sample of points spread over the data (at most [`SAMPLE`]), their distances to every centre and the drifts of
//! the last step give the bounds the next step would test, with this step's drifts standing
//! in for the next step's (drifts shrink as a run settles, so this errs towards computing
//! more). The forecast share is the part of the `n k` point-centre distances the pruned step
//! would compute, by the rules of `pruned.rs` (a point whose failing groups hold more than
//! `1 / FULL_SHARE` of the centres computes every centre), for Yinyang's groups and for
//! Hamerly's single bound from the same sample.

use super::groups::Groups;
use super::leaf::FULL_SHARE;
use crate::Element;
use crate::assign::{Centres, Scratch, TILE_ROWS, method_for, sq_distances_tile};
use crate::lloyd::dist2_f64;

/// Points sampled, at most: a few hundred give the share within a few percent.
const SAMPLE: usize = 256;
/// Points sampled, at least (all of them below): a forecast costs `m / n` of a plain step
/// for `m = n / SAMPLE_SHARE` between the two.
const SAMPLE_MIN: usize = 64;
/// See [`SAMPLE_MIN`].
const SAMPLE_SHARE: usize = 32;

/// What a pruned step would compute, as forecast from the sample.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Forecast {
    /// The share of point-centre distances computed with the groups' bounds.
    pub(super) groups: f64,
    /// The share computed with one bound per point (Hamerly's).
    pub(super) one: f64,
}

/// The forecast for the points `data` (`d` columns), the current centroids and those of the
/// step before (`prev`, the same shape), with the centres grouped as `g`.
pub(super) fn forecast<T: Element>(
    data: &[T],
    d: usize,
    centroids: &[f64],
    prev: &[f64],
    k: usize,
    g: &Groups,
) -> Forecast {
    let n = data.len() / d;
    let m = (n / SAMPLE_SHARE).clamp(SAMPLE_MIN, SAMPLE).min(n);
    if m == 0 || k < 2 {
        return Forecast {
            groups: 0.0,
            one: 0.0,
        };
    }
    let drift: Vec<f64> = (0..k)
        .map(|j| dist2_f64(&prev[j * d..(j + 1) * d], &centroids[j * d..(j + 1) * d]).sqrt())
        .collect();
    // Per group, the largest drift of its centres (centres in the groups' slot order below).
    let drift_group: Vec<f64> = (0..g.t)
        .map(|gg| {
            g.range(gg)
                .map(|sl| drift[g.order[sl] as usize])
                .fold(0.0, f64::max)
        })
        .collect();
    let drift_all = drift_group.iter().copied().fold(0.0, f64::max);
    let size: Vec<usize> = (0..g.t).map(|gg| g.range(gg).len()).collect();

    // Columns in slot order: each group's centres side by side.
    let cent = Centres::<T>::new(centroids, k, d, Some(&g.order), method_for(d, k), false);
    let mut s = Scratch::new();
    let mut dist = Vec::new();
    let mut tile = Vec::with_capacity(TILE_ROWS.min(m) * d);
    let mut nearest = vec![f64::INFINITY; g.t];
    let (mut work_groups, mut work_one) = (0usize, 0usize);
    let mut first = 0;
    while first < m {
        let rows = TILE_ROWS.min(m - first);
        tile.clear();
        for q in first..first + rows {
            // Evenly spread over the data (rows in file order are often sorted by something).
            let i = q * n / m;
            tile.extend_from_slice(&data[i * d..(i + 1) * d]);
        }
        sq_distances_tile(&tile, &cent, &mut s, &mut dist);
        for row in dist.chunks_exact_mut(k) {
            let (a, _) =
                row.iter().enumerate().fold(
                    (0, f64::INFINITY),
                    |b, (j, &v)| if v < b.1 { (j, v) } else { b },
                );
            let u = row[a].max(0.0).sqrt();
            let drift_a = drift[g.order[a] as usize];
            // Each group's nearest centre other than the point's.
            row[a] = f64::INFINITY;
            for (gg, v) in nearest.iter_mut().enumerate() {
                let m = row[g.range(gg)]
                    .iter()
                    .fold(f64::INFINITY, |m, &v| m.min(v));
                *v = m.max(0.0).sqrt();
            }
            // The bounds the next step tests, lowered by the drifts, against the distance to
            // the point's centre (raised by its drift before it is computed).
            let second = nearest.iter().copied().fold(f64::INFINITY, f64::min);
            let moved = u + drift_a;
            if second - drift_all <= u {
                work_one += k;
            }
            let lows = nearest.iter().zip(&drift_group).map(|(&v, &m)| v - m);
            if lows.clone().fold(f64::INFINITY, f64::min) <= moved {
                let failing: usize = lows
                    .zip(&size)
                    .filter(|&(lb, _)| lb <= u)
                    .map(|(_, &c)| c)
                    .sum();
                work_groups += if failing * FULL_SHARE > k { k } else { failing };
            }
        }
        first += rows;
    }
    let all = (m * k) as f64;
    Forecast {
        groups: work_groups as f64 / all,
        one: work_one as f64 / all,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two tight, far apart clusters of points and centres that barely moved: nothing to
    /// compute. The same centres after a drift larger than the clusters' gap: everything.
    #[test]
    fn forecast_follows_the_drift() {
        let d = 4;
        let data: Vec<f64> = (0..1000)
            .flat_map(|i| {
                let base = if i % 2 == 0 { 0.0 } else { 100.0 };
                (0..d).map(move |u| base + ((i * 7 + u) % 10) as f64 * 0.01)
            })
            .collect();
        let centroids: Vec<f64> = [0.05; 4].into_iter().chain([100.05; 4]).collect();
        let g = Groups::new(&centroids, 2, d, 2);
        let near: Vec<f64> = centroids.iter().map(|c| c + 1e-3).collect();
        let f = forecast(&data, d, &centroids, &near, 2, &g);
        assert_eq!(
            f,
            Forecast {
                groups: 0.0,
                one: 0.0
            }
        );
        let far: Vec<f64> = centroids.iter().map(|c| c + 300.0).collect();
        let f = forecast(&data, d, &centroids, &far, 2, &g);
        assert_eq!(
            f,
            Forecast {
                groups: 1.0,
                one: 1.0
            }
        );
    }
}
