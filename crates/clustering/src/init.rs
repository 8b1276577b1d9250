//! Initial centroids: greedy k-means++ (as scikit-learn) and random distinct points.

use rand::Rng;
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;

use crate::Element;
use crate::assign::{Centres, Method, Scratch, TILE_ROWS, sq_distances_tile};

/// Rows per block of the deterministic parallel sums (a multiple of [`TILE_ROWS`]).
const SUM_ROWS: usize = 2048;

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

/// The weighted potential of block `b` (rows `b * SUM_ROWS..`, `cl` their squared distances),
/// added in row order.
fn block_mass(cl: &[f64], b: usize, w: &impl Fn(usize) -> f64) -> f64 {
    let first = b * SUM_ROWS;
    cl.iter().enumerate().map(|(r, &c)| w(first + r) * c).sum()
}

/// The row drawn by `r` (in `[0, sum of mass)`) with probability proportional to `value(i)`:
/// the first row at which the running sum of the values exceeds `r`, the block found from
/// the blocks' sums `mass` and the row by a running sum inside it (from 0, in row order, as
/// its mass was added), clipped to the last row. A row whose value is 0 is never the first to
/// exceed `r` (numpy's `searchsorted(side="right")`).
fn draw(mass: &[f64], r: f64, n: usize, value: impl Fn(usize) -> f64) -> usize {
    let mut before = 0.0;
    for (b, &m) in mass.iter().enumerate() {
        let rest = r - before;
        if m > rest {
            let mut acc = 0.0;
            for i in b * SUM_ROWS..((b + 1) * SUM_ROWS).min(n) {
                acc += value(i);
                if acc > rest {
                    return i;
                }
            }
        }
        before += m;
    }
    n - 1
}

/// The candidates of one k-means++ step, prepared once for every block's distances.
struct Tiles<T> {
    d: usize,
    cent: Centres<T>,
    fused: bool,
}

/// Per-thread scratch of [`Tiles::distances`].
#[derive(Default)]
struct TileScratch<T> {
    fused: crate::fused::Buffer<T>,
    tile: Option<Scratch<T>>,
    wide: Vec<f64>,
}

impl<T: Element> Tiles<T> {
    /// `fused`: the rows' norms are at hand ([`fused_norms`]) for the fused kernel.
    fn new(d: usize, fused: bool, centres: &[f64], m: usize) -> Self {
        let method = if fused { Method::Fused } else { tile_method(d) };
        Tiles {
            d,
            cent: Centres::new(centres, m, d, None, method, false),
            fused,
        }
    }

    /// Squared distances of the rows of `x` (`xn2` their norms, when fused) to every centre,
    /// `out[i * m + t]`, rounded to `f32`, tile by tile.
    fn distances(&self, x: &[T], xn2: Option<&[f64]>, s: &mut TileScratch<T>, out: &mut [f32]) {
        let (d, m) = (self.d, self.cent.k);
        for (ti, (xt, ot)) in x
            .chunks(TILE_ROWS * d)
            .zip(out.chunks_mut(TILE_ROWS * m))
            .enumerate()
        {
            if self.fused {
                let norms = xn2.expect("norms for the fused kernel");
                let rows = xt.len() / d;
                let norms = &norms[ti * TILE_ROWS..ti * TILE_ROWS + rows];
                crate::fused::sq_distance_rows(xt, norms, &self.cent, &mut s.fused, ot);
            } else {
                let scratch = s.tile.get_or_insert_with(Scratch::new);
                sq_distances_tile(xt, &self.cent, scratch, &mut s.wide);
                round_into(ot, &s.wide);
            }
        }
    }
}

/// The rows' `|x|^2` for [`distances_to`] when it takes the fused kernel (`d >= 12` on a CPU
/// with AVX2): computed once for every pass of an initialisation.
fn fused_norms<T: Element>(data: &[T], d: usize) -> Option<Vec<f64>> {
    if d < 12 || !crate::isa::has_avx2() {
        return None;
    }
    Some(crate::cpu::row_norms_parallel(data, d))
}

/// Squared distances of every row of `data` to the `m` centres `centres`, in tiles through
/// the assignment engine: the fused kernel's values when `xn2` holds the rows' norms
/// ([`fused_norms`]), else the products (`d >= 12`) or the direct path: `out[i * m + t]`,
/// rounded to `f32` (the draws only need their proportions). Rows in fixed blocks on all
/// threads.
fn distances_to<T: Element>(
    data: &[T],
    d: usize,
    xn2: Option<&[f64]>,
    centres: &[f64],
    m: usize,
    out: &mut Vec<f32>,
) {
    let n = data.len() / d;
    out.clear();
    out.resize(n * m, 0.0);
    if let Some(xn2) = xn2 {
        let cent = Centres::<T>::new(centres, m, d, None, Method::Fused, false);
        data.par_chunks(TILE_ROWS * d)
            .zip(xn2.par_chunks(TILE_ROWS))
            .zip(out.par_chunks_mut(TILE_ROWS * m))
            .for_each_init(crate::fused::Buffer::default, |buf, ((x, xn2), o)| {
                crate::fused::sq_distance_rows(x, xn2, &cent, buf, o);
            });
        return;
    }
    for_each_tile(data, d, centres, m, out, m, round_into);
}

/// Lowers every row's `closest` squared distance to its distance to the nearest of the `m`
/// centres `centres` (tile by tile: no `n x m` array).
fn lower_to<T: Element>(data: &[T], d: usize, centres: &[f64], m: usize, closest: &mut [f64]) {
    for_each_tile(data, d, centres, m, closest, 1, |cl, ds| {
        for (c, ds) in cl.iter_mut().zip(ds.chunks_exact(m)) {
            for &v in ds {
                *c = c.min(v);
            }
        }
    });
}

/// The tile engine's method for centres of `d` columns without the fused kernel: matrix
/// products from 12 columns, else direct distances.
fn tile_method(d: usize) -> Method {
    if d >= 12 {
        Method::Gemm
    } else {
        Method::Direct
    }
}

/// `out` = `ds` rounded to `f32` (the draws only need their proportions).
fn round_into(out: &mut [f32], ds: &[f64]) {
    for (o, &v) in out.iter_mut().zip(ds) {
        *o = v as f32;
    }
}

/// Calls `fold(out_tile, distances)` for every tile of [`TILE_ROWS`] rows of `data`, on all
/// threads: `out_tile` the tile's part of `out` (`per_row` values a row), `distances` its
/// rows' squared distances to the `m` centres `centres` through the tile engine (row-major).
fn for_each_tile<T: Element, O: Send>(
    data: &[T],
    d: usize,
    centres: &[f64],
    m: usize,
    out: &mut [O],
    per_row: usize,
    fold: impl Fn(&mut [O], &[f64]) + Sync + Send,
) {
    let cent = Centres::<T>::new(centres, m, d, None, tile_method(d), false);
    let work = |s: &mut (Scratch<T>, Vec<f64>), (x, o): (&[T], &mut [O])| {
        sq_distances_tile(x, &cent, &mut s.0, &mut s.1);
        fold(o, &s.1);
    };
    data.par_chunks(TILE_ROWS * d)
        .zip(out.par_chunks_mut(TILE_ROWS * per_row))
        .for_each_init(|| (Scratch::new(), Vec::new()), work);
}

/// The number of rows of `data` (`d` columns), and the weight of row `i` (1 without
/// `weights`).
#[inline(always)]
fn rows_and_weights<T>(
    data: &[T],
    d: usize,
    weights: Option<&[f64]>,
) -> (usize, impl Fn(usize) -> f64 + Copy) {
    (data.len() / d, move |i: usize| {
        weights.map_or(1.0, |w| w[i])
    })
}

/// The row of the first centre: drawn by the uniform `u` in `[0, 1)` with probability
/// proportional to its weight (scikit-learn's `random_state.choice(n, p=sample_weight /
/// sample_weight.sum())`, up to rounding).
fn first_row(n: usize, w: impl Fn(usize) -> f64, u: f64) -> usize {
    let cum = running_sum((0..n).map(w), n);
    let total = *cum.last().unwrap_or(&0.0);
    search(&cum, u * total)
}

/// The first centre, row `first` of `data`, and every row's squared distance to it.
fn first_centre<T: Element>(
    data: &[T],
    d: usize,
    xn2: Option<&[f64]>,
    first: usize,
    closest: &mut Vec<f64>,
) -> Vec<f64> {
    let c0: Vec<f64> = data[first * d..(first + 1) * d]
        .iter()
        .map(|v| v.to_f64())
        .collect();
    let mut dist = Vec::new();
    distances_to(data, d, xn2, &c0, 1, &mut dist);
    closest.clear();
    closest.extend(dist.iter().map(|&v| v as f64));
    c0
}

/// Greedy k-means++ (Arthur & Vassilvitskii 2007, with scikit-learn's `2 + ln k` local
/// trials): the first centre is drawn with probability proportional to weight, each new one is
/// the best of a few candidates drawn with probability proportional to weight times squared
/// distance to the nearest centre so far. Each step computes the candidates' distances to
/// every row as one tiled matrix product (one pass over the data per centre, as
/// scikit-learn's), and the potentials in fixed blocks added in order, so the result does not
/// depend on the thread count.
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
    progress: &mut dyn FnMut(usize),
) -> Vec<f64> {
    let (n, w) = rows_and_weights(data, d, weights);
    let first = first_row(n, w, rng.random::<f64>());
    plusplus_from(
        data,
        d,
        weights,
        k,
        first,
        &mut || rng.random::<f64>(),
        progress,
    )
}

/// Greedy k-means++ as [`kmeans_plusplus`] from row `first`, each candidate drawn by the next
/// number of `uniform` (in `[0, 1)`; `local_trials(k)` of them per further centre, in
/// order): scikit-learn's `_kmeans_plusplus` given its `choice` and `uniform` draws.
pub(crate) fn plusplus_from<T: Element>(
    data: &[T],
    d: usize,
    weights: Option<&[f64]>,
    k: usize,
    first: usize,
    uniform: &mut dyn FnMut() -> f64,
    progress: &mut dyn FnMut(usize),
) -> Vec<f64> {
    let (n, w) = rows_and_weights(data, d, weights);
    let row = |i: usize| &data[i * d..(i + 1) * d];
    let to_f64 = |i: usize| row(i).iter().map(|v| v.to_f64()).collect::<Vec<f64>>();
    let mut closest = Vec::new();
    let xn2 = fused_norms(data, d);
    let mut centres = first_centre(data, d, xn2.as_deref(), first, &mut closest);
    centres.reserve(k * d);
    // Each block's weighted potential, in row order; the draws search them block by block.
    let mut mass: Vec<f64> = closest
        .par_chunks(SUM_ROWS)
        .enumerate()
        .map(|(b, cl)| block_mass(cl, b, &w))
        .collect();
    let trials = local_trials(k);
    let mut dist = vec![0f32; n * trials];

    let every = (k / 100).max(1);
    for done in 1..k {
        if done % every == 0 {
            progress(done);
        }
        let pot: f64 = mass.iter().sum();
        let cands: Vec<usize> = (0..trials)
            .map(|_| draw(&mass, uniform() * pot, n, |i| w(i) * closest[i]))
            .collect();
        let cand_pts: Vec<f64> = cands.iter().flat_map(|&i| to_f64(i)).collect();
        // The candidates' distances to every row and each candidate's potential, in one pass:
        // summed per fixed block in row order, then in block order.
        let tiles = Tiles::new(d, xn2.is_some(), &cand_pts, trials);
        // On the fit's team when there is one (crate::team): a pass of a few hundred
        // microseconds per centre finds its helpers awake.
        let blocks: Vec<(&[T], &mut [f32])> = data
            .chunks(SUM_ROWS * d)
            .zip(dist.chunks_mut(SUM_ROWS * trials))
            .collect();
        let parts: Vec<Vec<f64>> = crate::team::map_parts(blocks, |b, (x, ds)| {
            let mut scratch = TileScratch::default();
            let first = b * SUM_ROWS;
            let norms = xn2.as_deref().map(|v| &v[first..first + x.len() / d]);
            tiles.distances(x, norms, &mut scratch, ds);
            let mut s = vec![0.0; trials];
            for (r, ds) in ds.chunks_exact(trials).enumerate() {
                let (wi, ci) = (w(first + r), closest[first + r]);
                for (t, &v) in ds.iter().enumerate() {
                    s[t] += wi * ci.min(v as f64);
                }
            }
            s
        });
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
        // The new nearest distances, and each block's potential (the best candidate's, the
        // same sums in the same order).
        let blocks: Vec<_> = closest
            .chunks_mut(SUM_ROWS)
            .zip(dist.chunks(SUM_ROWS * trials))
            .zip(mass.iter_mut())
            .collect();
        crate::team::map_parts(blocks, |b, ((cl, ds), m)| {
            for (c, ds) in cl.iter_mut().zip(ds.chunks_exact(trials)) {
                *c = c.min(ds[best] as f64);
            }
            *m = block_mass(cl, b, &w);
        });
        centres.extend_from_slice(&cand_pts[best * d..(best + 1) * d]);
    }
    centres
}

/// k-means|| (Bahmani et al., "Scalable k-means++", VLDB 2012) in its simplest form, for
/// large `k`: after a first centre drawn by weight, `rounds` rounds each draw about
/// `k / rounds` new centres at once with probability proportional to weight times squared
/// distance to the nearest centre so far (distinct rows), and one tiled product per round
/// updates those distances. Unlike the paper there is no oversampling and no reclustering
/// step: the drawn rows are the centres. Its cost is about one Lloyd iteration (`n k d`), where
/// k-means++ makes `k` sequential passes over the data; with `rounds = k` it is k-means++
/// (without the greedy trials).
///
/// Returns `k * d` centroids, row-major. `data` has at least `k >= 1` rows.
pub(crate) fn kmeans_parallel<T: Element>(
    data: &[T],
    d: usize,
    weights: Option<&[f64]>,
    k: usize,
    rounds: usize,
    rng: &mut ChaCha8Rng,
    progress: &mut dyn FnMut(usize),
) -> Vec<f64> {
    let (n, w) = rows_and_weights(data, d, weights);
    let mut closest = Vec::new();
    let first = first_row(n, w, rng.random::<f64>());
    let mut centres = first_centre(data, d, None, first, &mut closest);
    let mut chosen = vec![false; n];
    // The first centre's row (its distance is 0 unless duplicates tie it).
    let mut count = 1;
    let rounds = rounds.clamp(1, k.max(1));
    for r in 0..rounds {
        if count >= k {
            break;
        }
        let want = (k - count).div_ceil(rounds - r);
        let cum = running_sum((0..n).map(|i| w(i) * closest[i]), n);
        let pot = *cum.last().unwrap_or(&0.0);
        let mut picked: Vec<usize> = Vec::with_capacity(want);
        // Draws proportional to weight times distance, distinct, a few attempts; rows of zero
        // weight or distance are never drawn here.
        for _ in 0..8 {
            if picked.len() >= want || pot <= 0.0 {
                break;
            }
            let mut draws: Vec<usize> = (0..2 * (want - picked.len()))
                .map(|_| search(&cum, rng.random::<f64>() * pot))
                .collect();
            draws.sort_unstable();
            draws.dedup();
            for i in draws {
                if picked.len() < want && !chosen[i] && w(i) * closest[i] > 0.0 {
                    chosen[i] = true;
                    picked.push(i);
                }
            }
        }
        // Too few rows with positive mass (duplicates): the rest uniformly among the others.
        while picked.len() < want {
            let i = rng.random_range(0..n);
            if !chosen[i] {
                chosen[i] = true;
                picked.push(i);
            }
        }
        picked.sort_unstable();
        let new = rows_of(data, d, &picked);
        count += picked.len();
        centres.extend_from_slice(&new);
        progress(count.min(k));
        if count < k {
            lower_to(data, d, &new, picked.len(), &mut closest);
        }
    }
    centres.truncate(k * d);
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
    rows_of(data, d, &idx)
}

/// The rows `rows` of `data` (`d` columns), in that order, as centroids.
pub(crate) fn rows_of<T: Element>(data: &[T], d: usize, rows: &[usize]) -> Vec<f64> {
    rows.iter()
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

    /// scikit-learn's `_kmeans_plusplus` given its draws, in plain `f64`: a running sum of
    /// weight times distance, `searchsorted` of each uniform times the potential, the
    /// candidate of least potential (the first of equal ones).
    fn sklearn_plusplus(
        x: &[f64],
        d: usize,
        w: &[f64],
        k: usize,
        first: usize,
        u: &[f64],
    ) -> Vec<usize> {
        let n = x.len() / d;
        let dist = |i: usize, j: usize| -> f64 {
            (0..d).map(|c| (x[i * d + c] - x[j * d + c]).powi(2)).sum()
        };
        let mut closest: Vec<f64> = (0..n).map(|i| dist(i, first)).collect();
        let mut chosen = vec![first];
        let trials = local_trials(k);
        for c in 1..k {
            let cum = running_sum((0..n).map(|i| w[i] * closest[i]), n);
            let pot = cum[n - 1];
            let cands: Vec<usize> = u[(c - 1) * trials..c * trials]
                .iter()
                .map(|&v| search(&cum, v * pot))
                .collect();
            let pots: Vec<f64> = cands
                .iter()
                .map(|&j| (0..n).map(|i| w[i] * closest[i].min(dist(i, j))).sum())
                .collect();
            let best = (0..trials).fold(0, |b, t| if pots[t] < pots[b] { t } else { b });
            for (i, cl) in closest.iter_mut().enumerate() {
                *cl = cl.min(dist(i, cands[best]));
            }
            chosen.push(cands[best]);
        }
        chosen
    }

    /// k-means++ from given draws picks scikit-learn's rows, with and without weights, in
    /// dimensions below and above the fused kernel's.
    #[test]
    fn plusplus_from_draws_picks_scikit_learns_rows() {
        for (n, d, k) in [(50, 2, 5), (400, 3, 12), (900, 16, 9)] {
            let mut rng = ChaCha8Rng::seed_from_u64(n as u64);
            let x: Vec<f64> = (0..n * d).map(|_| rng.random::<f64>()).collect();
            let weights: Vec<f64> = (0..n).map(|i| (i % 4) as f64 * 0.5).collect();
            for w in [None, Some(&weights[..])] {
                let ones = vec![1.0; n];
                let wr = w.unwrap_or(&ones);
                for run in 0..5 {
                    let first = (run * 37 + 1) % n;
                    let u: Vec<f64> = (0..(k - 1) * local_trials(k))
                        .map(|_| rng.random())
                        .collect();
                    let want = sklearn_plusplus(&x, d, wr, k, first, &u);
                    let mut next = u.iter().copied();
                    let c = plusplus_from(
                        &x,
                        d,
                        w,
                        k,
                        first,
                        &mut || next.next().unwrap(),
                        &mut |_| {},
                    );
                    assert_eq!(c, rows_of(&x, d, &want), "n {n} d {d} k {k} run {run}");
                    assert!(next.next().is_none(), "every number read");
                }
            }
        }
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
        let c = kmeans_plusplus(&data, 2, None, 4, &mut rng, &mut |_| {});
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
            let c = kmeans_plusplus(&data, 1, Some(&weights), 5, &mut rng, &mut |_| {});
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
                let ca = kmeans_plusplus(&data, d, None, k, &mut a, &mut |_| {});
                let cb = kmeans_plusplus(&data, d, Some(&ones), k, &mut b, &mut |_| {});
                let bits = |c: &[f64]| c.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
                assert_eq!(bits(&ca), bits(&cb), "n {n} k {k} seed {seed}");
                // the same amount of randomness consumed
                assert_eq!(a.next_u64(), b.next_u64());
            }
        }
    }

    #[test]
    fn parallel_init_picks_k_distinct_rows_and_spreads_them() {
        // Sixteen tight groups far apart, 64 centres in 4 rounds: every group gets a centre,
        // no row twice, the same centres for the same seed.
        let mut data = Vec::new();
        for g in 0..16 {
            for i in 0..50 {
                data.push(g as f64 * 100.0 + (i % 7) as f64 * 0.01);
                data.push((g / 4) as f64 * 100.0 + (i / 7) as f64 * 0.01);
            }
        }
        let run = |seed| {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            kmeans_parallel(&data, 2, None, 64, 4, &mut rng, &mut |_| {})
        };
        let c = run(5);
        assert_eq!(c.len(), 128);
        let mut rows: Vec<(i64, i64)> = c
            .chunks(2)
            .map(|p| ((p[0] * 100.0).round() as i64, (p[1] * 100.0).round() as i64))
            .collect();
        let mut groups: Vec<i64> = c
            .chunks(2)
            .map(|p| (p[0] / 100.0).round() as i64 * 10 + (p[1] / 100.0).round() as i64)
            .collect();
        groups.sort();
        groups.dedup();
        assert_eq!(groups.len(), 16, "{groups:?}");
        rows.sort();
        rows.dedup();
        assert_eq!(rows.len(), 64, "a row drawn twice");
        assert_eq!(c, run(5));
        // More centres than rows with mass: duplicates fill up from the other rows.
        let dup = vec![1.0f64; 20];
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        assert_eq!(
            kmeans_parallel(&dup, 1, None, 20, 3, &mut rng, &mut |_| {}).len(),
            20
        );
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
