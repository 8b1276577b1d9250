//! Initial centroids: greedy k-means++ (as scikit-learn) and random distinct points.

use rand::Rng;
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;

use crate::Element;
use crate::lloyd::dist2_f64;

/// Rows per block of the deterministic parallel sums.
const SUM_ROWS: usize = 1 << 14;

/// Number of candidates greedy k-means++ tries per centre: `2 + floor(ln k)`.
pub(crate) fn local_trials(k: usize) -> usize {
    2 + (k as f64).ln().floor() as usize
}

/// First index whose running sum exceeds `r` (numpy's `searchsorted(side="right")`, so points that
/// add nothing are never drawn), clipped to the last index.
fn search(cumsum: &[f64], r: f64) -> usize {
    cumsum.partition_point(|&c| c <= r).min(cumsum.len() - 1)
}

fn running_sum(values: impl Iterator<Item = f64>, n: usize) -> Vec<f64> {
    let mut out = Vec::with_capacity(n);
    let mut acc = 0.0;
    for v in values {
        acc += v;
        out.push(acc);
    }
    out
}

/// Greedy k-means++ (Arthur & Vassilvitskii 2007, with scikit-learn's `2 + ln k` local
/// trials): the first centre is drawn with probability proportional to weight, each new one is
/// the best of a few candidates drawn with probability proportional to weight times squared
/// distance to the nearest centre so far.
///
/// No weights is the same as unit weights, to the bit (scikit-learn's contract for
/// `sample_weight`): every draw goes through the same running sums and the same random numbers,
/// and a unit weight multiplies exactly.
///
/// Returns `k * d` centroids, row-major. `data` has at least `k >= 1` rows.
pub(crate) fn kmeans_plusplus<T: Element>(
    data: &[T],
    d: usize,
    weights: Option<&[f64]>,
    k: usize,
    rng: &mut ChaCha8Rng,
) -> Vec<f64> {
    let n = data.len() / d;
    let w = |i: usize| weights.map_or(1.0, |w| w[i]);
    let row = |i: usize| &data[i * d..(i + 1) * d];
    let to_f64 = |i: usize| row(i).iter().map(|v| v.to_f64()).collect::<Vec<f64>>();
    let mut centres = Vec::with_capacity(k * d);

    // as scikit-learn: random_state.choice(n, p=sample_weight / sample_weight.sum())
    let cum = running_sum((0..n).map(w), n);
    let total = *cum.last().unwrap_or(&0.0);
    let first = search(&cum, rng.random::<f64>() * total);
    let c0 = to_f64(first);
    let mut closest: Vec<f64> = data
        .par_chunks_exact(d)
        .map(|x| dist2_f64(x, &c0))
        .collect();
    centres.extend_from_slice(&c0);
    let mut pot: f64 = (0..n).map(|i| w(i) * closest[i]).sum();
    let trials = local_trials(k);

    for _ in 1..k {
        let cum = running_sum((0..n).map(|i| w(i) * closest[i]), n);
        let cands: Vec<usize> = (0..trials)
            .map(|_| search(&cum, rng.random::<f64>() * pot))
            .collect();
        let cand_pts: Vec<Vec<f64>> = cands.iter().map(|&i| to_f64(i)).collect();
        // Potential of each candidate, summed per fixed block then in block order.
        let parts: Vec<Vec<f64>> = data
            .par_chunks(SUM_ROWS * d)
            .enumerate()
            .map(|(b, blk)| {
                let mut s = vec![0.0; trials];
                for (r, x) in blk.chunks_exact(d).enumerate() {
                    let i = b * SUM_ROWS + r;
                    for (t, c) in cand_pts.iter().enumerate() {
                        s[t] += w(i) * closest[i].min(dist2_f64(x, c));
                    }
                }
                s
            })
            .collect();
        let mut pots = vec![0.0; trials];
        for p in &parts {
            for t in 0..trials {
                pots[t] += p[t];
            }
        }
        let mut best = 0;
        for t in 1..trials {
            if pots[t] < pots[best] {
                best = t;
            }
        }
        let c = &cand_pts[best];
        closest
            .par_iter_mut()
            .zip(data.par_chunks_exact(d))
            .for_each(|(cl, x)| *cl = cl.min(dist2_f64(x, c)));
        pot = pots[best];
        centres.extend_from_slice(c);
    }
    centres
}

/// `k` distinct rows chosen uniformly at random.
pub(crate) fn random_points<T: Element>(
    data: &[T],
    d: usize,
    k: usize,
    rng: &mut ChaCha8Rng,
) -> Vec<f64> {
    let n = data.len() / d;
    let mut idx = rand::seq::index::sample(rng, n, k).into_vec();
    idx.sort_unstable();
    idx.iter()
        .flat_map(|&i| data[i * d..(i + 1) * d].iter().map(|v| v.to_f64()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn trials_follow_scikit_learn() {
        assert_eq!(local_trials(1), 2);
        assert_eq!(local_trials(8), 4);
        assert_eq!(local_trials(64), 6);
    }

    #[test]
    fn plusplus_picks_distinct_far_points() {
        // Four tight groups far apart: k-means++ must take one point of each.
        let mut data = Vec::new();
        for g in 0..4 {
            for i in 0..25 {
                data.push(g as f64 * 100.0 + i as f64 * 0.01);
                data.push(-(g as f64) * 100.0);
            }
        }
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let c = kmeans_plusplus(&data, 2, None, 4, &mut rng);
        let mut groups: Vec<i64> = c.chunks(2).map(|p| (p[0] / 100.0).round() as i64).collect();
        groups.sort();
        assert_eq!(groups, vec![0, 1, 2, 3]);
    }

    #[test]
    fn plusplus_never_picks_zero_weight_points() {
        let data: Vec<f64> = (0..200).map(|i| i as f64).collect();
        let weights: Vec<f64> = (0..200)
            .map(|i| if i % 2 == 0 { 1.0 } else { 0.0 })
            .collect();
        for seed in 0..20 {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let c = kmeans_plusplus(&data, 1, Some(&weights), 5, &mut rng);
            assert!(c.iter().all(|&v| (v as usize).is_multiple_of(2)), "{c:?}");
        }
    }

    /// scikit-learn's rule: unit sample weights give exactly the unweighted result, so the
    /// initialisation must draw the same random numbers and compute the same sums.
    #[test]
    fn plusplus_with_unit_weights_is_plusplus_without_weights() {
        use rand::RngCore;
        for (n, d, k) in [(1, 1, 1), (7, 2, 3), (200, 3, 8), (5000, 4, 20)] {
            let data: Vec<f64> = (0..n * d)
                .map(|i| ((i * 7919) % 1000) as f64 * 0.37)
                .collect();
            let ones = vec![1.0; n];
            for seed in 0..10 {
                let mut a = ChaCha8Rng::seed_from_u64(seed);
                let mut b = ChaCha8Rng::seed_from_u64(seed);
                let ca = kmeans_plusplus(&data, d, None, k, &mut a);
                let cb = kmeans_plusplus(&data, d, Some(&ones), k, &mut b);
                let bits = |c: &[f64]| c.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
                assert_eq!(bits(&ca), bits(&cb), "n {n} k {k} seed {seed}");
                // the same amount of randomness consumed
                assert_eq!(a.next_u64(), b.next_u64());
            }
        }
    }

    #[test]
    fn random_points_are_distinct_rows() {
        let data: Vec<f32> = (0..100).map(|i| i as f32).collect();
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let mut c = random_points(&data, 1, 100, &mut rng);
        c.sort_by(f64::total_cmp);
        assert_eq!(c, (0..100).map(|i| i as f64).collect::<Vec<_>>());
    }
}
