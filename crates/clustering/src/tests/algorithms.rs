//! Every algorithm gives plain Lloyd's result bit for bit: the pruned algorithms, `Auto`'s
//! adaptive bounds, the small-`d` leaf, and what the bounds prune.

use super::*;

/// Every algorithm gives plain Lloyd's result, bit for bit: labels, centroids, inertia and
/// iteration count, on f32 and f64, small and large `d` and `k` (direct and product paths),
/// including data with exact ties and far from the origin.
#[test]
fn every_algorithm_equals_lloyd_bit_for_bit() {
    let cases: &[(usize, usize, usize, f64)] = &[
        (3000, 2, 5, 0.0),
        (2500, 3, 40, 0.0),
        // at most eight dimensions: the first bounded step's rows in the vector lanes, with
        // a few rows left over (n not a multiple of 8)
        (2003, 7, 70, 0.0),
        (1999, 8, 12, 5.0),
        (4000, 16, 64, 0.0),
        (3000, 24, 100, 30.0),
        (2000, 40, 200, 0.0),
        (1500, 130, 17, 0.0),
        // d past the blocked direct path: groups of every size (Elkan's single centres
        // too) go through the product
        (1200, 72, 120, 0.0),
    ];
    for &(n, d, k, offset) in cases {
        let blobs = generate_blobs(n, d, k / 2 + 1, 0.3, (n + d + k) as u64);
        let mut data = blobs.data.mapv(|v| v + offset);
        // exact duplicates: ties between points
        for i in 0..n / 10 {
            let src = data.row(i).to_owned();
            data.row_mut(n - 1 - i).assign(&src);
        }
        let init = data.slice(ndarray::s![..k, ..]).to_owned();
        assert_every_algorithm_is_lloyd(&data, &init, 12, &format!("n {n} d {d} k {k}"));
    }
}

/// On data without clusters (uniform, where every step moves labels and Elkan's one-centre
/// groups are computed in place, several centres a point) every algorithm still gives plain
/// Lloyd's fit bit for bit: both paths (direct below a dozen dimensions, products above), `k`
/// below and past a word of the failing-centre mask and past two blocks of eight, and
/// duplicate points (ties).
#[test]
fn every_algorithm_equals_lloyd_on_uniform_data() {
    // (Up to 16 centres in up to 64 dimensions, the rows whose bounds fail for two centres
    // or more take every centre at once: one block, two, a partial last chunk.)
    for &(n, d, k) in &[
        (6000, 5, 8),
        (5000, 20, 8),
        (4000, 33, 3),
        (3000, 61, 13),
        (3000, 16, 70),
    ] {
        let mut v = random_data(n, d, (n * 7 + d * 3 + k) as u64);
        v.copy_within(0..d * 50, d * (n - 50));
        let data = Array2::from_shape_vec((n, d), v).unwrap();
        let init = data.slice(ndarray::s![..k, ..]).to_owned();
        assert_every_algorithm_is_lloyd(&data, &init, 25, &format!("uniform n {n} d {d} k {k}"));
    }
}

/// Asserts that every algorithm gives plain Lloyd's fit of `data` from `init` with `max_iter`
/// iterations, bit for bit (labels, iterations, inertia, centroids), in f64 and in f32.
pub(super) fn assert_every_algorithm_is_lloyd(
    data: &Array2<f64>,
    init: &Array2<f64>,
    max_iter: usize,
    what: &str,
) {
    use crate::Algorithm;
    let k = init.nrows();
    let init = Init::Given(init.clone());
    let f32data = data.mapv(|v| v as f32);
    let params = |a: Algorithm| {
        KMeans::new(k)
            .init(init.clone())
            .max_iter(max_iter)
            .tol(0.0)
            .exec(Exec::Cpu)
            .algorithm(a)
    };
    let fit64 = |a: Algorithm| params(a).fit(data.view()).unwrap();
    let fit32 = |a: Algorithm| params(a).fit(f32data.view()).unwrap();
    let (l64, l32) = (fit64(Algorithm::Lloyd), fit32(Algorithm::Lloyd));
    for a in [
        Algorithm::Hamerly,
        Algorithm::Yinyang,
        Algorithm::Elkan,
        Algorithm::Auto,
    ] {
        let (r64, r32) = (fit64(a), fit32(a));
        let first_diff = |a: &[u32], b: &[u32]| a.iter().zip(b).position(|(x, y)| x != y);
        assert_eq!(
            first_diff(&r64.labels, &l64.labels),
            None,
            "{a:?} f64 {what}"
        );
        assert_eq!(r64.iterations, l64.iterations, "{a:?} f64 {what}");
        assert_eq!(r64.inertia.to_bits(), l64.inertia.to_bits(), "{a:?} f64");
        assert_eq!(r64.centroids, l64.centroids, "{a:?} f64 {what}");
        assert_eq!(
            first_diff(&r32.labels, &l32.labels),
            None,
            "{a:?} f32 {what}"
        );
        assert_eq!(r32.inertia.to_bits(), l32.inertia.to_bits(), "{a:?} f32");
        assert_eq!(r32.centroids, l32.centroids, "{a:?} f32 {what}");
    }
}

/// The fast step gives the reference's labels and exact distances (inertia) exactly.
#[test]
fn fast_step_labels_are_the_references() {
    for &(n, d, k) in &[
        (5000, 2, 7),
        (3000, 16, 64),
        (2000, 64, 300),
        (700, 200, 33),
    ] {
        let data = random_data(n, d, (n * 3 + d) as u64);
        let c = random_data(k, d, 17);
        let f32data: Vec<f32> = data.iter().map(|&v| v as f32).collect();
        let mut la = vec![u32::MAX; n];
        let mut lb = vec![u32::MAX; n];
        step_reference(&data, d, None, &c, k, &mut la);
        step_parallel(&data, d, (None, None, None), &c, k, &mut lb);
        assert_eq!(la, lb, "f64 n {n} d {d} k {k}");
        step_reference(&f32data, d, None, &c, k, &mut la);
        step_parallel(&f32data, d, (None, None, None), &c, k, &mut lb);
        assert_eq!(la, lb, "f32 n {n} d {d} k {k}");
    }
}

/// The small-`d` leaf (`d <= 8`, centres in the caller's order) gives the general direct
/// leaf's statistics and the reference's, bit for bit: every `d` it takes and the next, `k`
/// below, at and past the vector width and the in-order limit (blocks of centres), exact ties (duplicate centres, duplicate points),
/// weights, float32, data far from the origin, and distances that overflow to infinity.
#[test]
fn small_leaf_is_the_general_leaf_and_the_reference_bit_for_bit() {
    use crate::assign::{Centres, Method};
    use crate::cpu::step_leaf;
    fn check<T: crate::Element>(x: &[T], d: usize, w: Option<&[f64]>, c: &[f64], k: usize) {
        let n = x.len() / d;
        let what = format!(
            "{} d {d} k {k} n {n} weights {}",
            std::any::type_name::<T>(),
            w.is_some()
        );
        let (mut la, mut lb, mut lc) = (vec![u32::MAX; n], vec![u32::MAX; n], vec![u32::MAX; n]);
        let small = Centres::<T>::new(c, k, d, None, Method::Direct, false);
        assert!(small.in_order);
        let ids: Vec<u32> = (0..k as u32).collect();
        let general = Centres::<T>::new(c, k, d, Some(&ids), Method::Direct, false);
        assert!(!general.in_order);
        let a = step_leaf(x, d, w, None, None, &small, &mut la);
        let b = step_leaf(x, d, w, None, None, &general, &mut lb);
        let r = step_reference(x, d, w, c, k, &mut lc);
        assert_eq!(la, lc, "{what}");
        assert_eq!(lb, lc, "{what}");
        for s in [&a, &b] {
            assert_eq!(s.changed, r.changed, "{what}");
            assert_eq!(s.inertia.to_bits(), r.inertia.to_bits(), "{what}");
            let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&s.sums), bits(&r.sums), "{what}");
            assert_eq!(bits(&s.counts), bits(&r.counts), "{what}");
        }
    }
    for d in 1..=9 {
        for k in [1, 2, 3, 7, 8, 9, 16, 17, 40, 128, 131] {
            let n = 1500;
            let mut x = random_data(n, d, (d * 100 + k) as u64);
            let mut c = random_data(k, d, (d * 7 + k) as u64);
            // Exact ties: a duplicated centre (the lower index must win) and points on centres.
            if k > 2 {
                let (head, tail) = c.split_at_mut((k - 1) * d);
                tail.copy_from_slice(&head[d..2 * d]);
            }
            for (i, row) in c.chunks_exact(d).enumerate().take(10) {
                x[i * 3 * d..(i * 3 + 1) * d].copy_from_slice(row);
            }
            let w: Vec<f64> = (0..n).map(|i| (i % 5) as f64 * 0.25).collect();
            check(&x, d, None, &c, k);
            check(&x, d, Some(&w), &c, k);
            let x32: Vec<f32> = x.iter().map(|&v| v as f32).collect();
            check(&x32, d, None, &c, k);
            let far: Vec<f64> = x.iter().map(|&v| v * 1e-3 + 1e6).collect();
            let cfar: Vec<f64> = c.iter().map(|&v| v * 1e-3 + 1e6).collect();
            check(&far, d, None, &cfar, k);
            // Squared distances that overflow to infinity: every centre infinitely far.
            let huge: Vec<f64> = x.iter().map(|&v| v.signum() * 1e300).collect();
            let chuge: Vec<f64> = c.iter().map(|&v| -v.signum() * 1e300).collect();
            check(&huge, d, None, &chuge, k);
        }
    }
}

/// `dist2_small` (empty partial sums `-0.0`, dropped by the compiler) has the bits of
/// `dist2_f64` (empty partial sums `0.0`) for every `D <= 8`, on zeros, subnormals, huge values
/// and overflow.
#[test]
fn dist2_small_is_dist2_f64() {
    use crate::assign::dist2_small;
    use crate::lloyd::dist2_f64;
    fn check<const D: usize>(vals: &[f64]) {
        let mut rng = ChaCha8Rng::seed_from_u64(D as u64);
        for _ in 0..2000 {
            let x: [f64; D] = std::array::from_fn(|_| vals[rng.random_range(0..vals.len())]);
            let c: [f64; D] = std::array::from_fn(|_| vals[rng.random_range(0..vals.len())]);
            let a = dist2_small(&x, |u| c[u]);
            let b = dist2_f64(&x[..], &c[..]);
            assert_eq!(a.to_bits(), b.to_bits(), "D {D} x {x:?} c {c:?}");
        }
    }
    let vals = [
        0.0,
        -0.0,
        1.0,
        -1.0,
        0.1,
        -2.5,
        1e-310,
        -1e-310,
        1e-160,
        3e155,
        -3e155,
        1e300,
        -1e300,
        f64::MAX,
        f64::MIN_POSITIVE,
        0.30000000000000004,
        7.0,
    ];
    check::<1>(&vals);
    check::<2>(&vals);
    check::<3>(&vals);
    check::<4>(&vals);
    check::<5>(&vals);
    check::<6>(&vals);
    check::<7>(&vals);
    check::<8>(&vals);
}

/// `Algorithm::Auto` picks what its documentation says: plain Lloyd below 128 clusters and for
/// a single pass, adaptive Yinyang bounds from 128 clusters on.
#[test]
fn auto_picks_lloyd_below_128_clusters() {
    use crate::Algorithm::{Lloyd, Yinyang};
    use crate::kmeans::auto_algorithm;
    for (d, k, max_iter, want) in [
        (2, 2, 300, Lloyd),
        (2, 127, 300, Lloyd),
        (2, 128, 300, Yinyang),
        (16, 64, 300, Lloyd),
        (128, 256, 300, Yinyang),
        (128, 1024, 1, Lloyd),
        (256, 4096, 1, Yinyang),
        (256, 4096, 20, Yinyang),
    ] {
        assert_eq!(
            auto_algorithm(d, k, max_iter + 1),
            want,
            "d {d} k {k} max_iter {max_iter}"
        );
    }
    // One pass (one iteration without the final labels): nothing to prune.
    assert_eq!(auto_algorithm(256, 4096, 1), Lloyd);
}

/// An adaptive run (`Algorithm::Auto`'s bounds) gives the same fit as plain Lloyd whether it
/// keeps its bounds, gives them up, or starts them late, bit for bit.
#[test]
fn adaptive_bounds_give_lloyds_fit() {
    use crate::bounds::BoundsStepper;
    use crate::lloyd::lloyd;
    // (d = 4: the bounds' first step takes the direct path, so a run of 12 steps never starts
    // them; 40 steps do, after ADAPTIVE_DIRECT_MIN_PLAIN plain ones.)
    for (n, d, k, spread, max_iter) in [
        (3000, 4, 130, 0.05, 12),
        (3000, 4, 130, 5.0, 40),
        (2000, 16, 150, 5.0, 12),
    ] {
        let (_, data, c) = blobs_and_first_centres(n, d, k, k / 2, spread, (n + k) as u64);
        let (p, want, plain_labels) = plain_lloyd_fit(&data, d, k, &c, max_iter);
        // Plain steps taken to last as measured, no time (the first pruned step gives the
        // bounds up) and forever (the bounds are kept).
        for plain_secs in [None, Some(0.0), Some(f64::INFINITY)] {
            let mut s = BoundsStepper::new(&data, d, None, 8).adaptive(true);
            if let Some(secs) = plain_secs {
                s.force_plain_secs(secs);
                s.force_forecast(true);
            }
            let got = lloyd(&mut s, c.clone(), &p, |_, _, _| Ok(())).unwrap();
            let what = format!("n {n} d {d} k {k} plain steps {plain_secs:?}");
            assert_eq!(got.centroids, want.centroids, "{what}");
            assert_eq!(got.last, want.last, "{what}");
            let renting = d < 12 && got.iterations <= 20;
            match plain_secs {
                _ if renting => assert_eq!(s.bounds_state(), (false, false), "{what}"),
                Some(0.0) => assert_eq!(s.bounds_state(), (false, true), "{what}"),
                Some(_) => assert_eq!(s.bounds_state(), (true, false), "{what}"),
                None => {}
            }
            assert_eq!(got.iterations, want.iterations);
            assert_eq!(s.plain.labels, plain_labels);
        }
    }
}

/// An adaptive run at large `k d` (past `DEFER_BELOW_KD`) takes plain steps while a step
/// changes more than 1 in 20 labels and starts its bounds after the first that changes fewer:
/// the bounds' first steps, which evaluate every distance while many labels change, cost more
/// than plain ones. Its fit is plain Lloyd's, bit for bit.
#[test]
fn adaptive_bounds_wait_for_the_labels_to_settle_at_large_kd() {
    use crate::bounds::BoundsStepper;
    use crate::lloyd::lloyd;
    let (n, d, k) = (3000, 64, 300);
    let (_, data, c) = blobs_and_first_centres(n, d, k, k / 2, 3.0, 7);
    let (p, want, _) = plain_lloyd_fit(&data, d, k, &c, 40);
    // the plain run's changed labels per step: the adaptive run's plain steps end after the
    // first step that changed at most n / 20
    let mut changed = Vec::new();
    let mut s = BoundsStepper::new(&data, d, None, 8).adaptive(true);
    s.force_plain_secs(f64::INFINITY);
    s.force_forecast(true);
    let got = lloyd(&mut s, c.clone(), &p, |_, _, st| {
        changed.push(st.changed);
        Ok(())
    })
    .unwrap();
    assert_eq!(got.centroids, want.centroids);
    assert_eq!(got.iterations, want.iterations);
    let settled = changed
        .iter()
        .position(|&c| c * 20 <= n as u64)
        .expect("labels settle");
    assert!(
        settled >= 1,
        "the first step changes every label: {changed:?}"
    );
    assert_eq!(s.plain_steps(), settled + 1, "changed per step {changed:?}");
    assert_eq!(s.bounds_state(), (true, false));
}

/// An adaptive run that gives its bounds up and tries them again, alternating Yinyang's groups
/// and Hamerly's single bound, still gives plain Lloyd's fit bit for bit.
#[test]
fn adaptive_retries_give_lloyds_fit() {
    use crate::bounds::BoundsStepper;
    use crate::lloyd::lloyd;
    for (n, d, k, max_iter) in [(2000, 16, 150, 40), (6000, 4, 130, 80)] {
        let (_, data, c) = blobs_and_first_centres(n, d, k, k / 2, 20.0, (n + k) as u64);
        let (p, want, plain_labels) = plain_lloyd_fit(&data, d, k, &c, max_iter);
        // Every pruned step gives the bounds up (plain steps take no time), and every retry
        // comes two plain steps later.
        let mut s = BoundsStepper::new(&data, d, None, 8).adaptive(true);
        s.force_plain_secs(0.0);
        s.force_forecast(true);
        s.force_retry_after(2);
        let got = lloyd(&mut s, c.clone(), &p, |_, _, _| Ok(())).unwrap();
        let what = format!("n {n} d {d} k {k}");
        assert!(
            s.attempts() >= 3,
            "{what}: {} attempts in {} iterations",
            s.attempts(),
            got.iterations
        );
        assert_eq!(got.centroids, want.centroids, "{what}");
        assert_eq!(got.last, want.last, "{what}");
        assert_eq!(got.iterations, want.iterations, "{what}");
        assert_eq!(s.plain.labels, plain_labels, "{what}");
    }
}

/// An adaptive run that gave its bounds up tries them again as soon as a forecast says the
/// next kind would compute a fraction of what the failed attempt did, long before its
/// rent-or-buy wait is over; the fit is still plain Lloyd's, bit for bit.
#[test]
fn adaptive_retries_early_when_the_forecast_says_so() {
    use crate::bounds::BoundsStepper;
    use crate::lloyd::lloyd;
    let (n, d, k) = (3000, 16, 150);
    let (_, data, c) = blobs_and_first_centres(n, d, k, k / 2, 20.0, 11);
    let (p, want, plain_labels) = plain_lloyd_fit(&data, d, k, &c, 60);
    let mut s = BoundsStepper::new(&data, d, None, 8).adaptive(true);
    // Every pruned step is slow (plain steps take no time), the wait never ends, and every
    // forecast says the bounds pay: only the forecast brings them back.
    s.force_plain_secs(0.0);
    s.force_forecast(true);
    s.force_retry_after(usize::MAX);
    let got = lloyd(&mut s, c.clone(), &p, |_, _, _| Ok(())).unwrap();
    assert!(
        s.attempts() >= 2,
        "{} attempts in {} iterations",
        s.attempts(),
        got.iterations
    );
    assert_eq!(got.centroids, want.centroids);
    assert_eq!(got.iterations, want.iterations);
    assert_eq!(s.plain.labels, plain_labels);
}

/// An adaptive run starts its bounds where the forecast says a pruned step would compute
/// little (tight clusters) and keeps taking plain steps where it would compute most distances
/// (uniform data in many dimensions, every point nearly as close to many centres); either
/// way the fit is plain Lloyd's, bit for bit.
#[test]
fn adaptive_bounds_start_where_the_forecast_says_they_pay() {
    use crate::bounds::BoundsStepper;
    use crate::lloyd::lloyd;
    use rand::{Rng, SeedableRng};
    let (n, d, k) = (3000, 48, 100);
    let (_, tight, c_tight) = blobs_and_first_centres(n, d, k, k / 2, 1.0, 3);
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(4);
    let uniform: Vec<f32> = (0..n * d).map(|_| rng.random::<f32>()).collect();
    let c_uniform: Vec<f64> = uniform[..k * d].iter().map(|&v| f64::from(v)).collect();
    for (data, c, tight) in [(&tight, &c_tight, true), (&uniform, &c_uniform, false)] {
        let (p, want, plain_labels) = plain_lloyd_fit(data, d, k, c, 60);
        let mut s = BoundsStepper::new(data, d, None, 8).adaptive(true);
        // Plain steps never end the bounds by their time: only the forecast decides.
        s.force_plain_secs(f64::INFINITY);
        let mut changed = Vec::new();
        let got = lloyd(&mut s, c.clone(), &p, |_, _, st| {
            changed.push(st.changed);
            Ok(())
        })
        .unwrap();
        let what = format!("tight {tight}: changed per step {changed:?}");
        // The first step after the labels settle (at most 1 in 20 changed).
        let settled = 1 + changed
            .iter()
            .position(|&c| c * 20 <= n as u64)
            .expect("settles");
        if tight {
            assert_eq!(s.bounds_state(), (true, false), "{what}");
        } else {
            // Forecasts said no for a while after the labels settled.
            assert!(
                s.plain_steps() > settled + 4,
                "{what}: {} plain steps",
                s.plain_steps()
            );
        }
        assert_eq!(got.centroids, want.centroids, "{what}");
        assert_eq!(got.iterations, want.iterations, "{what}");
        assert_eq!(s.plain.labels, plain_labels, "{what}");
    }
}

/// Plain Lloyd steps on `data` from `c` (tolerance 0, at most `max_iter`, final labels): the
/// parameters, the fit and the labels the adaptive runs above must reproduce bit for bit.
fn plain_lloyd_fit(
    data: &[f32],
    d: usize,
    k: usize,
    c: &[f64],
    max_iter: usize,
) -> (
    crate::lloyd::LloydParams,
    crate::lloyd::LloydOutcome,
    Vec<u32>,
) {
    use crate::lloyd::{LloydParams, ShiftLimit, lloyd};
    let p = LloydParams {
        k,
        max_iter,
        limit: ShiftLimit::Absolute(0.0),
        start_iteration: 0,
        final_labels: true,
    };
    let mut plain = CpuStepper::new(data, d, None, CpuKind::Parallel);
    let want = lloyd(&mut plain, c.to_vec(), &p, |_, _, _| Ok(())).unwrap();
    (p, want, plain.labels)
}

/// Without the final labels a fit returns the same centroids (one pass fewer), no labels, and
/// the last iteration's inertia, whatever the algorithm; predict then labels the points.
#[test]
fn compute_labels_off_skips_only_the_final_pass() {
    use crate::Algorithm::{Elkan, Hamerly, Lloyd, Yinyang};
    let (x64, x32, c) = blobs_and_first_centres(3_000, 12, 48, 40, 0.4, 5);
    let x32 = ndarray::Array2::from_shape_vec((3_000, 12), x32).unwrap();
    let init = ndarray::Array2::from_shape_vec((48, 12), c).unwrap();
    for algorithm in [Lloyd, Hamerly, Yinyang, Elkan] {
        for max_iter in [1, 4, 300] {
            let params = KMeans::new(48)
                .init(Init::Given(init.clone()))
                .max_iter(max_iter)
                .algorithm(algorithm);
            let with = params.fit(x32.view()).unwrap();
            let mut seen = Vec::new();
            let without = params
                .clone()
                .compute_labels(false)
                .fit_observed(x32.view(), None, &mut |p| seen.push(p.inertia))
                .unwrap();
            let what = format!("{algorithm:?} max_iter {max_iter}");
            assert!(without.labels.is_empty(), "{what}");
            assert_eq!(without.centroids, with.centroids, "{what}");
            assert_eq!(without.iterations, with.iterations, "{what}");
            if without.inertia != with.inertia {
                // The last iteration's inertia (from its sums, as the progress reports), which
                // the final centroids only lower.
                assert_eq!(Some(&without.inertia), seen.last(), "{what}");
                assert!(without.inertia > with.inertia, "{what}");
            } else {
                // A run that stops because no label changed has its final labels already.
                assert!(with.converged, "{what}");
            }
            let predicted = crate::predict(with.centroids.view(), x32.view(), Exec::Cpu).unwrap();
            assert_eq!(predicted, with.labels, "{what}");
            // float64 as well (the same path, another element type).
            let w64 = params
                .clone()
                .compute_labels(false)
                .fit(x64.view())
                .unwrap();
            assert!(w64.labels.is_empty(), "{what}");
        }
    }
}

/// `n` points of `clusters` blobs (`generate_blobs`), as `f64` and as `f32`, and the first `k`
/// points as centres.
fn blobs_and_first_centres(
    n: usize,
    d: usize,
    k: usize,
    clusters: usize,
    spread: f64,
    seed: u64,
) -> (ndarray::Array2<f64>, Vec<f32>, Vec<f64>) {
    let blobs = generate_blobs(n, d, clusters, spread, seed);
    let data: Vec<f32> = blobs.data.iter().map(|&v| v as f32).collect();
    let c: Vec<f64> = blobs
        .data
        .slice(ndarray::s![..k, ..])
        .iter()
        .copied()
        .collect();
    (blobs.data, data, c)
}

/// The pruned algorithms skip most distance computations once the centroids settle, and the
/// statistics of every step are the plain step's.
#[test]
fn bounds_prune_most_distances_after_a_few_iterations() {
    use crate::bounds::BoundsStepper;
    use crate::lloyd::update_centroids;
    use std::sync::atomic::Ordering;
    let (n, d, k) = (20_000, 16, 64);
    for t in [1, 8, 64] {
        let (_, data, mut c) = blobs_and_first_centres(n, d, k, k, 0.1, 5);
        let mut plain = CpuStepper::new(&data, d, None, CpuKind::Parallel);
        let mut pruned = BoundsStepper::new(&data, d, None, t);
        let mut last = 0;
        let mut deferred = 0;
        for it in 0..8 {
            deferred += usize::from(pruned.deferring);
            let a = plain.step(&c, k).unwrap();
            let b = pruned.step(&c, k).unwrap();
            assert_eq!(a, b, "t {t} iteration {it}");
            assert_eq!(plain.labels, pruned.plain.labels);
            last = pruned.evaluated.load(Ordering::Relaxed);
            c = update_centroids(&mut plain, &c, k, d, &a).unwrap();
        }
        // k d = 1,024: plain steps first (every label changes in the first), then bounds.
        assert!(
            (2..8).contains(&deferred),
            "t {t}: {deferred} steps before the bounds"
        );
        assert!(
            last < (n * k / 10) as u64,
            "t {t}: {last} of {} distances",
            n * k
        );
    }
}

/// Centres that jump far (relocated empty clusters) are tested one by one while the rest of
/// their group keeps its bound; every step still equals the plain step, on the direct and the
/// product paths, and the far-mover test runs.
#[test]
fn bounds_with_far_moving_centres_equal_the_plain_step() {
    use crate::bounds::BoundsStepper;
    use crate::lloyd::update_centroids;
    for (d, k, t) in [(16, 64, 8), (72, 96, 12), (4, 48, 6)] {
        let n = 6000;
        let (blobs, data, mut c) = blobs_and_first_centres(n, d, k, k / 2, 0.2, (d + k) as u64);
        let mut plain = CpuStepper::new(&data, d, None, CpuKind::Parallel);
        let mut pruned = BoundsStepper::new(&data, d, None, t);
        // Bounds from the first step (small k d would defer them while labels change).
        pruned.deferring = false;
        let mut far_steps = 0;
        for it in 0..8 {
            let a = plain.step(&c, k).unwrap();
            let b = pruned.step(&c, k).unwrap();
            assert_eq!(a, b, "d {d} k {k} iteration {it}");
            assert_eq!(
                plain.labels, pruned.plain.labels,
                "d {d} k {k} iteration {it}"
            );
            far_steps += usize::from(pruned.far_movers > 0);
            c = update_centroids(&mut plain, &c, k, d, &a).unwrap();
            if it % 2 == 1 {
                // Every eighth centre jumps to a point far from it.
                for j in (0..k).step_by(8) {
                    let src = (j * 7919 + it * 31) % n;
                    for u in 0..d {
                        c[j * d + u] = blobs[[src, u]] * 1.5;
                    }
                }
            }
        }
        assert!(far_steps > 0, "d {d} k {k}: the far movers were never used");
    }
}
