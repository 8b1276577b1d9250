//! Steps and fits against the sequential reference: bit-identical and planted results,
//! weights, empty clusters, errors, the GPU against the CPU, property tests.

use super::algorithms::assert_every_algorithm_is_lloyd;
use super::*;
use crate::lloyd::StepStats;

/// One step of the reference and of the parallel stepper from `c`, their labels equal up to
/// near-ties: the two steps' statistics and labels.
fn reference_and_parallel_step(
    data: &[f64],
    d: usize,
    c: &[f64],
    k: usize,
) -> (StepStats, StepStats, Vec<u32>, Vec<u32>) {
    let n = data.len() / d;
    let mut la = vec![u32::MAX; n];
    let mut lb = vec![u32::MAX; n];
    let sa = step_reference(data, d, None, c, k, &mut la);
    let sb = step_parallel(data, d, (None, None, None), c, k, &mut lb);
    assert_labels_match_up_to_ties(data, d, c, &la, &lb, 1e-12);
    (sa, sb, la, lb)
}

/// Two steps' statistics from the same labels: the same counts, sums and inertia to rounding.
fn assert_same_statistics(a: &StepStats, b: &StepStats) {
    assert_close(&a.sums, &b.sums, 1e-9);
    assert_eq!(a.counts, b.counts);
    assert_close(&[a.inertia], &[b.inertia], 1e-9);
}

#[test]
fn parallel_step_matches_reference() {
    for &(k, d) in &[(1, 1), (3, 2), (4, 7), (16, 16), (64, 8), (5, 40)] {
        for n in sizes() {
            if n < k {
                continue;
            }
            let data = random_data(n, d, (n * 31 + k) as u64);
            let c = random_data(k, d, 99);
            let (sa, sb, la, mut lb) = reference_and_parallel_step(&data, d, &c, k);
            if la == lb {
                assert_same_statistics(&sa, &sb);
                assert_eq!(sa.changed, n as u64);
                assert_eq!(sb.changed, n as u64);
            }
            // A second step with the same centroids changes nothing.
            let again = step_parallel(&data, d, (None, None, None), &c, k, &mut lb);
            assert_eq!(again.changed, 0, "k={k} d={d} n={n}");
        }
    }
}

#[test]
fn parallel_step_is_bit_identical_for_any_thread_count() {
    let (n, d, k) = (100_003, 9, 20);
    let data = random_data(n, d, 5);
    let c = random_data(k, d, 6);
    let run = |threads| {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        pool.install(|| {
            let mut l = vec![u32::MAX; n];
            (
                step_parallel(&data, d, (None, None, None), &c, k, &mut l),
                l,
            )
        })
    };
    let (a, la) = run(1);
    let (b, lb) = run(2);
    let (c3, lc) = run(3);
    assert_eq!(a, b);
    assert_eq!(a, c3);
    assert_eq!(la, lb);
    assert_eq!(la, lc);
}

#[test]
fn a_team_gives_the_bits_of_rayon() {
    // A step on a team of 1 to 3 threads (the leaves claimed in any order) against the same
    // step on rayon: the same labels and the same bits.
    let (n, d, k) = (50_021, 9, 20);
    let data = random_data(n, d, 7);
    let c = random_data(k, d, 8);
    let mut l = vec![u32::MAX; n];
    let want = step_parallel(&data, d, (None, None, None), &c, k, &mut l);
    for threads in 1..=3 {
        let mut lt = vec![u32::MAX; n];
        let got = crate::team::with_team(threads, || {
            step_parallel(&data, d, (None, None, None), &c, k, &mut lt)
        });
        assert_eq!(got, want, "{threads} threads");
        assert_eq!(lt, l);
    }
    // Whole fits, Lloyd and a pruned algorithm: from this thread (outside rayon's pool, so
    // on a team) and inside a pool of 3 threads (on rayon).
    let x = Array2::from_shape_vec((n, d), data.clone()).unwrap();
    for algorithm in [crate::Algorithm::Lloyd, crate::Algorithm::Hamerly] {
        let p = KMeans::new(k)
            .seed(4)
            .max_iter(8)
            .algorithm(algorithm)
            .exec(Exec::Cpu);
        let team = p.fit(x.view()).unwrap();
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(3)
            .build()
            .unwrap();
        let rayon = pool.install(|| p.fit(x.view()).unwrap());
        assert_eq!(team.centroids, rayon.centroids, "{algorithm:?}");
        assert_eq!(team.labels, rayon.labels);
        assert_eq!(team.inertia.to_bits(), rayon.inertia.to_bits());
    }
}

#[test]
fn concurrent_fits_each_on_its_team_finish_with_the_same_bits() {
    // Four fits at once from threads outside rayon's pool: four teams share rayon's threads
    // for their helpers; each ends, with the result of a fit alone.
    let (n, d, k) = (30_011, 12, 9);
    let x = Array2::from_shape_vec((n, d), random_data(n, d, 17)).unwrap();
    let p = KMeans::new(k).seed(5).max_iter(15).exec(Exec::Cpu);
    let alone = p.fit(x.view()).unwrap();
    std::thread::scope(|s| {
        let runs: Vec<_> = (0..4)
            .map(|_| s.spawn(|| p.fit(x.view()).unwrap()))
            .collect();
        for r in runs {
            let r = r.join().unwrap();
            assert_eq!(r.centroids, alone.centroids);
            assert_eq!(r.labels, alone.labels);
        }
    });
}

#[test]
fn fit_matches_reference_and_recovers_planted_clusters() {
    for (n, d, k) in [(3000, 2, 3), (5000, 16, 8), (20_011, 4, 5)] {
        let b = generate_blobs(n, d, k, 0.02, n as u64);
        let p = KMeans::new(k).seed(3).n_init(2).exec(Exec::Cpu);
        let fast = p.fit(b.data.view()).unwrap();
        let slow = p.fit_reference(b.data.view(), None).unwrap();
        assert_eq!(fast.labels, slow.labels);
        assert_close(
            fast.centroids.as_slice().unwrap(),
            slow.centroids.as_slice().unwrap(),
            1e-9,
        );
        assert_eq!(fast.iterations, slow.iterations);
        assert!(fast.converged);
        // Planted clusters are recovered: a bijection between found and planted labels.
        let mut map = vec![u32::MAX; k];
        for (&t, &l) in b.truth.iter().zip(&fast.labels) {
            if map[t as usize] == u32::MAX {
                map[t as usize] = l;
            }
            assert_eq!(map[t as usize], l, "n={n} d={d} k={k}");
        }
        let mut m = map.clone();
        m.sort();
        m.dedup();
        assert_eq!(m.len(), k);
        // Inertia is what the labels and centroids say.
        let c = fast.centroids.as_slice().unwrap();
        let x = b.data.as_slice().unwrap();
        let inertia: f64 = (0..n)
            .map(|i| {
                let l = fast.labels[i] as usize;
                dist2(&x[i * d..(i + 1) * d], &c[l * d..(l + 1) * d])
            })
            .sum();
        assert_close(&[fast.inertia], &[inertia], 1e-9);
        // predict gives the final labels.
        assert_eq!(
            predict(fast.centroids.view(), b.data.view(), Exec::Cpu).unwrap(),
            fast.labels
        );
    }
}

#[test]
fn seeded_runs_are_reproducible_and_f32_works() {
    let b = generate_blobs(2000, 3, 4, 0.1, 8);
    let p = KMeans::new(4).seed(11).n_init(3).exec(Exec::Cpu);
    assert_eq!(p.fit(b.data.view()).unwrap(), p.fit(b.data.view()).unwrap());
    let x32 = b.data.mapv(|v| v as f32);
    let r32 = p.fit(x32.view()).unwrap();
    let r64 = p.fit(b.data.view()).unwrap();
    assert_eq!(r32.labels, r64.labels);
    assert_close(
        &r32.centroids.iter().map(|&v| v as f64).collect::<Vec<_>>(),
        r64.centroids.as_slice().unwrap(),
        1e-5,
    );
    let r = KMeans::new(4)
        .init(Init::Random)
        .seed(2)
        .fit(x32.view())
        .unwrap();
    assert_eq!(r.labels.len(), 2000);
}

#[test]
fn n_init_keeps_the_lowest_inertia() {
    let b = generate_blobs(1500, 2, 6, 0.15, 4);
    let fit = |n_init| {
        KMeans::new(6)
            .init(Init::Random)
            .n_init(n_init)
            .seed(9)
            .fit(b.data.view())
            .unwrap()
    };
    let best = fit(6);
    // Run 0 of several is the single run with the same seed.
    let one = fit(1);
    assert!(best.inertia <= one.inertia);
    let worst_allowed = one.inertia;
    assert!(best.inertia <= worst_allowed);
}

/// scikit-learn's contract: `sample_weight` of all ones gives exactly the unweighted result
/// for the same seed, initialisation included. Checked bit for bit on the rayon path (small and
/// large k * d, so both distance kernels, and n above the parallel threshold) and on the
/// sequential reference, for both element types, k-means++ and random initialisation, several
/// runs, and with an empty cluster to relocate.
#[test]
fn unit_weights_are_no_weights_bit_for_bit() {
    fn check<T: crate::Element>(data: &Array2<T>, p: &KMeans) {
        let ones = Array1::from_elem(data.nrows(), T::from_f64(1.0));
        let a = p.fit(data.view()).unwrap();
        let b = p.fit_weighted(data.view(), ones.view()).unwrap();
        assert_eq!(a, b, "{p:?}"); // centroids, labels, inertia, iterations, converged
        let r = p.fit_reference(data.view(), None).unwrap();
        let rw = p.fit_reference(data.view(), Some(ones.view())).unwrap();
        assert_eq!(r, rw, "reference {p:?}");
    }
    for (n, d, k) in [
        (5, 1, 1),
        (1000, 2, 5),
        (3000, 16, 12), // k * d >= 128: the blocked |c|^2 - 2 x.c kernel
        ((1 << 14) + 7, 3, 9),
    ] {
        let b = generate_blobs(n, d, k, 0.3, n as u64);
        for init in [Init::KMeansPlusPlus, Init::Random] {
            let p = KMeans::new(k)
                .init(init)
                .n_init(2)
                .seed(n as u64 + 1)
                .exec(Exec::Cpu);
            check(&b.data, &p);
            check(&b.data.mapv(|v| v as f32), &p);
        }
    }
    // an empty cluster relocated to the farthest point (duplicate rows, more centroids than
    // distinct points once converged)
    let dup = array![[0.0], [0.0], [0.0], [5.0], [5.0], [9.0]];
    let p = KMeans::new(3).init(Init::Given(array![[0.0], [0.1], [0.2]]));
    check(&dup, &p.clone().exec(Exec::Cpu));
    // the steppers the distributed run uses (CpuStepper::Parallel with the weights of its
    // shard) give the same statistics, to the bit
    let data = random_data(20_000, 5, 3);
    let ones = vec![1.0; 20_000];
    let c = random_data(7, 5, 4);
    let mut a = CpuStepper::new(&data, 5, None, CpuKind::Parallel);
    let mut b = CpuStepper::new(&data, 5, Some(&ones), CpuKind::Parallel);
    let (sa, sb) = (a.step(&c, 7).unwrap(), b.step(&c, 7).unwrap());
    assert_eq!(sa.to_flat(), sb.to_flat());
    assert_eq!(a.farthest(&c, 3).unwrap(), b.farthest(&c, 3).unwrap());
}

/// On the GPU, unit weights go through the same host logic and the same kernel arithmetic
/// (`w = 1` multiplies exactly); the GPU's direct path adds with atomics in a varying order,
/// so two GPU runs agree to rounding, whether weighted or not.
#[test]
fn gpu_unit_weights_are_no_weights() {
    let Some(_gpu) = gpu_for_test("clustering gpu_unit_weights_are_no_weights") else {
        return;
    };
    for (n, d, k) in [(10_000, 2, 4), (20_000, 32, 200)] {
        let b = generate_blobs(n, d, k, 0.05, 9);
        let ones = Array1::from_elem(n, 1.0);
        let p = KMeans::new(k).seed(3).exec(Exec::Cuda);
        let a = p.fit(b.data.view()).unwrap();
        let w = p.fit_weighted(b.data.view(), ones.view()).unwrap();
        assert_eq!((a.labels, a.iterations), (w.labels, w.iterations));
        assert_close(
            a.centroids.as_slice().unwrap(),
            w.centroids.as_slice().unwrap(),
            1e-12,
        );
    }
}

#[test]
fn weights_act_like_repeated_points() {
    let data = array![
        [0.0, 0.0],
        [1.0, 0.0],
        [0.0, 1.0],
        [10.0, 10.0],
        [11.0, 10.0]
    ];
    let w = array![1.0, 2.0, 3.0, 1.0, 4.0];
    let mut rep = Vec::new();
    for (r, &m) in data.rows().into_iter().zip(&w) {
        for _ in 0..m as usize {
            rep.extend(r.iter().copied());
        }
    }
    let rep = Array2::from_shape_vec((11, 2), rep).unwrap();
    let init = Init::Given(array![[0.0, 0.0], [10.0, 10.0]]);
    let a = KMeans::new(2)
        .init(init.clone())
        .fit_weighted(data.view(), w.view())
        .unwrap();
    let b = KMeans::new(2).init(init).fit(rep.view()).unwrap();
    assert_close(
        a.centroids.as_slice().unwrap(),
        b.centroids.as_slice().unwrap(),
        1e-12,
    );
    assert_close(&[a.inertia], &[b.inertia], 1e-12);
}

#[test]
fn empty_cluster_moves_to_the_farthest_point() {
    // Centroid 2 is far from everything: it gets no points and must move to the point
    // farthest from its centroid, (20, 0) (36 from 14), which leaves cluster 1.
    let data = vec![0.0, 0.0, 1.0, 0.0, 10.0, 0.0, 20.0, 0.0];
    let c = vec![0.5, 0.0, 14.0, 0.0, 1000.0, 1000.0];
    let mut s = CpuStepper::new(&data, 2, None, CpuKind::Parallel);
    let st = s.step(&c, 3).unwrap();
    assert_eq!(st.counts, vec![2.0, 2.0, 0.0]);
    let new = update_centroids(&mut s, &c, 3, 2, &st).unwrap();
    assert_eq!(new, vec![0.5, 0.0, 10.0, 0.0, 20.0, 0.0]);
    // Through fit: no NaN, every cluster used.
    let init = Init::Given(Array2::from_shape_vec((3, 2), c).unwrap());
    let x = Array2::from_shape_vec((4, 2), data).unwrap();
    for exec in [Exec::Cpu, Exec::Auto] {
        let r = KMeans::new(3)
            .init(init.clone())
            .exec(exec)
            .fit(x.view())
            .unwrap();
        assert!(r.centroids.iter().all(|v: &f64| v.is_finite()));
        let mut used = r.labels.clone();
        used.sort();
        used.dedup();
        assert_eq!(used.len(), 3);
    }
}

/// scikit-learn's relocation: the empty clusters in index order take the farthest points,
/// farthest first, even a cluster's last point; a cluster left empty goes to the biggest
/// cluster's mean when that index is lower, else to its unscaled sum (`_average_centers`).
#[test]
fn empty_clusters_are_relocated_as_scikit_learn_does() {
    let data = vec![0.0, 0.1, 0.2, 0.3, 0.9, 100.0];
    let update = |c: &[f64]| {
        let mut s = CpuStepper::new(&data, 1, None, CpuKind::Parallel);
        let st = s.step(c, c.len()).unwrap();
        update_centroids(&mut s, c, c.len(), 1, &st).unwrap()
    };
    // 100 (distance 10 from 90) is cluster 1's only point and goes to cluster 2, 0.9 (0.65
    // from 0.25) to cluster 3; cluster 1 is left empty, after the biggest, cluster 0: its mean.
    let new = update(&[0.25, 90.0, 1000.0, -1000.0]);
    let mean = (0.0 + 0.1 + 0.2 + 0.3 + 0.9 - 0.9) / 4.0;
    assert_close(&new, &[mean, mean, 100.0, 0.9], 1e-15);
    // The same with the lone point's cluster first: it is left empty before the biggest
    // cluster, so it gets that cluster's sum of the centred data, plus the data's mean, as
    // scikit-learn 1.9 places it (-50.15, the value scikit-learn gives).
    let new = update(&[90.0, 0.25, 1000.0, -1000.0]);
    let mu = (0.0 + 0.1 + 0.2 + 0.3 + 0.9 + 100.0) / 6.0;
    assert_close(&new, &[4.0 * (mean - mu) + mu, mean, 100.0, 0.9], 1e-14);
    assert!((new[0] + 50.15).abs() < 1e-12);
    // The pruned algorithms see the emptied cluster jump (onto another centre, or far away)
    // and still give Lloyd's fit.
    let x = Array2::from_shape_vec((6, 1), data.clone()).unwrap();
    for start in [[0.25, 90.0, 1000.0, -1000.0], [90.0, 0.25, 1000.0, -1000.0]] {
        let init = Array2::from_shape_vec((4, 1), start.to_vec()).unwrap();
        assert_every_algorithm_is_lloyd(&x, &init, 5, &format!("from {start:?}"));
    }
    // Every point on its centroid: nothing is moved, the empty cluster goes to the biggest.
    let data = vec![1.0, 1.0, 1.0, 2.0, 2.0];
    let mut s = CpuStepper::new(&data, 1, None, CpuKind::Parallel);
    let c = [1.0, 2.0, 5.0];
    let st = s.step(&c, 3).unwrap();
    assert_eq!(
        update_centroids(&mut s, &c, 3, 1, &st).unwrap(),
        [1.0, 2.0, 1.0]
    );
}

#[test]
fn duplicate_points_with_more_clusters_than_distinct_values_stay_finite() {
    let x = Array2::from_elem((10, 3), 1.5f64);
    let r = KMeans::new(4).seed(1).fit(x.view()).unwrap();
    assert!(r.centroids.iter().all(|v| *v == 1.5));
    assert_eq!(r.inertia, 0.0);
    let r = KMeans::new(10).init(Init::Random).fit(x.view()).unwrap();
    assert!(r.centroids.iter().all(|v| v.is_finite()));
}

#[test]
fn errors_are_typed() {
    let x = array![[1.0, 2.0], [3.0, 4.0]];
    assert_eq!(KMeans::new(0).fit(x.view()), Err(KMeansError::ZeroClusters));
    assert_eq!(
        KMeans::new(3).fit(x.view()),
        Err(KMeansError::TooManyClusters { k: 3, n: 2 })
    );
    let empty = Array2::<f64>::zeros((0, 2));
    assert_eq!(
        KMeans::new(1).fit(empty.view()),
        Err(KMeansError::TooManyClusters { k: 1, n: 0 })
    );
    let nod = Array2::<f64>::zeros((3, 0));
    assert_eq!(
        KMeans::new(1).fit(nod.view()),
        Err(KMeansError::ZeroDimensions)
    );
    let nan = array![[1.0, 2.0], [3.0, f64::NAN]];
    assert!(matches!(
        KMeans::new(1).fit(nan.view()),
        Err(KMeansError::NonFiniteData { row: 1, col: 1, .. })
    ));
    let inf = array![[f32::INFINITY, 2.0], [3.0, 1.0]];
    assert!(matches!(
        KMeans::new(1).fit(inf.view()),
        Err(KMeansError::NonFiniteData { row: 0, col: 0, .. })
    ));
    let bad_init = Init::Given(array![[1.0, 2.0, 3.0]]);
    assert!(matches!(
        KMeans::new(1).init(bad_init).fit(x.view()),
        Err(KMeansError::ShapeMismatch { .. })
    ));
    let bad_init = Init::Given(array![[1.0, 2.0]]);
    assert!(matches!(
        KMeans::new(2).init(bad_init).fit(x.view()),
        Err(KMeansError::ShapeMismatch { .. })
    ));
    for w in [
        array![1.0],
        array![1.0, -1.0],
        array![0.0, 0.0],
        array![1.0, f64::NAN],
    ] {
        let e = KMeans::new(1).fit_weighted(x.view(), w.view()).unwrap_err();
        assert!(
            matches!(
                e,
                KMeansError::ShapeMismatch { .. } | KMeansError::InvalidWeights(_)
            ),
            "{e}"
        );
    }
    assert!(matches!(
        KMeans::new(1).max_iter(0).fit(x.view()),
        Err(KMeansError::InvalidParameter(_))
    ));
    assert!(matches!(
        KMeans::new(1).tol(-1.0).fit(x.view()),
        Err(KMeansError::InvalidParameter(_))
    ));
    assert!(matches!(
        KMeans::new(1).tol(f64::NAN).fit(x.view()),
        Err(KMeansError::InvalidParameter(_))
    ));
    assert!(matches!(
        KMeans::new(1).n_init(0).fit(x.view()),
        Err(KMeansError::InvalidParameter(_))
    ));
    let c = array![[1.0, 2.0, 3.0]];
    assert!(matches!(
        predict(c.view(), x.view(), Exec::Cpu),
        Err(KMeansError::ShapeMismatch { .. })
    ));
    let c0 = Array2::<f64>::zeros((0, 2));
    assert_eq!(
        predict(c0.view(), x.view(), Exec::Cpu),
        Err(KMeansError::ZeroClusters)
    );
    let none = Array2::<f64>::zeros((0, 2));
    let c1 = array![[1.0, 2.0]];
    assert_eq!(predict(c1.view(), none.view(), Exec::Cpu), Ok(vec![]));
}

/// Drawn starts: each run starts from its draws (k-means++ from its first row and uniform
/// numbers, or its rows in their order), the best run wins, and bad draws are errors.
#[test]
fn drawn_starts_run_each_draw_and_bad_draws_are_errors() {
    let b = generate_blobs(300, 2, 3, 0.05, 4);
    let x = b.data.view();
    let rows = |r: &[usize]| Draws::Rows(r.to_vec());
    // Rows in the drawn order: the same fit as those rows given as centroids.
    let order = [7, 250, 120];
    let given = Array2::from_shape_fn((3, 2), |(i, j)| x[[order[i], j]]);
    let g_start: Vec<f64> = given.iter().copied().collect();
    let a = KMeans::new(3)
        .init(Init::Drawn(vec![rows(&order)]))
        .fit(x)
        .unwrap();
    let g = KMeans::new(3).init(Init::Given(given)).fit(x).unwrap();
    assert_eq!(a.centroids, g.centroids);
    assert_eq!(a.labels, g.labels);
    // Two runs: the better one wins whichever comes first (rows 0-2 are one blob's).
    let bad = rows(&[0, 1, 2]);
    for runs in [vec![bad.clone(), rows(&order)], vec![rows(&order), bad]] {
        let r = KMeans::new(3).init(Init::Drawn(runs)).fit(x).unwrap();
        assert_eq!(r.inertia, g.inertia);
    }
    // k-means++ draws: the first centre is the first row given.
    let trials = crate::init::local_trials(3);
    let pp = |first, u: f64| Draws::PlusPlus {
        first,
        uniforms: vec![u; 2 * trials],
    };
    let r = KMeans::new(3)
        .init(Init::Drawn(vec![pp(5, 0.5)]))
        .max_iter(1)
        .fit(x)
        .unwrap();
    assert!(r.centroids.iter().all(|v| v.is_finite()));
    for (init, what) in [
        (Init::Drawn(vec![]), "no run"),
        (Init::Drawn(vec![pp(300, 0.5)]), "first row 300 of 300"),
        (Init::Drawn(vec![pp(0, 1.0)]), "not in [0, 1)"),
        (Init::Drawn(vec![pp(0, f64::NAN)]), "not in [0, 1)"),
        (
            Init::Drawn(vec![Draws::PlusPlus {
                first: 0,
                uniforms: vec![0.5; 3],
            }]),
            "takes",
        ),
        (Init::Drawn(vec![rows(&[1, 2, 1])]), "row 1 drawn twice"),
        (Init::Drawn(vec![rows(&[1, 2, 300])]), "row 300 of 300"),
    ] {
        let e = KMeans::new(3).init(init).fit(x).unwrap_err();
        assert!(e.to_string().contains(what), "{e}");
    }
    let e = KMeans::new(3)
        .init(Init::Drawn(vec![rows(&[1, 2])]))
        .fit(x)
        .unwrap_err();
    assert!(matches!(e, KMeansError::ShapeMismatch { .. }), "{e}");
    // A sample's drawn start indexes the sample; a run without draws is an error.
    let drawn = Init::Drawn(vec![rows(&order)]);
    let c = crate::chunked::sample_centroids(x, None, 3, &drawn, 0, 0).unwrap();
    assert_eq!(c.iter().copied().collect::<Vec<_>>(), g_start);
    let e = crate::chunked::sample_centroids(x, None, 3, &drawn, 0, 1).unwrap_err();
    assert!(e.to_string().contains("run 1 of 1"), "{e}");
}

/// scikit-learn's `_is_same_clustering`: a renaming of the first labels' clusters.
#[test]
fn same_clustering_is_up_to_renaming() {
    use crate::kmeans::same_clustering;
    assert!(same_clustering(&[0, 0, 1, 2], &[2, 2, 0, 1], 3));
    assert!(!same_clustering(&[0, 0, 1, 2], &[2, 1, 0, 1], 3));
    assert!(same_clustering(&[], &[], 2));
}

#[test]
fn non_contiguous_views_work() {
    let b = generate_blobs(500, 3, 2, 0.05, 1);
    let t = b.data.t().to_owned(); // 3 x 500
    let view = t.t(); // a transposed (Fortran-order) view of the same points
    let p = KMeans::new(2).seed(4);
    assert_eq!(p.fit(view).unwrap(), p.fit(b.data.view()).unwrap());
}

#[test]
fn max_iter_is_respected() {
    let b = generate_blobs(5000, 2, 8, 0.3, 2);
    let r = KMeans::new(8)
        .max_iter(2)
        .tol(0.0)
        .init(Init::Random)
        .fit(b.data.view())
        .unwrap();
    assert_eq!(r.iterations, 2);
    assert!(!r.converged);
}

#[test]
fn gpu_out_of_memory_is_a_typed_error() {
    let b = generate_blobs(5000, 8, 4, 0.05, 5);
    let Some(r) = gpu_runtime::testing::with_simulated_memory_limit(4096, || {
        KMeans::new(4).seed(1).exec(Exec::Cuda).fit(b.data.view())
    }) else {
        return;
    };
    assert!(
        matches!(
            r,
            Err(KMeansError::Gpu(gpu_runtime::GpuError::OutOfMemory { .. }))
        ),
        "{r:?}"
    );
}

#[test]
fn gpu_step_matches_reference() {
    let Some(gpu) = gpu_for_test("clustering gpu_step_matches_reference") else {
        return;
    };
    // (k, d): the one-kernel path and the tiled path (k * d too big for shared memory).
    for &(k, d) in &[(1, 1), (4, 2), (16, 16), (300, 20), (130, 70)] {
        // Under the simulated driver (kernels on one CPU core): up to a few blocks.
        let limit = gpu_runtime::testing::gpu_test_size(usize::MAX, 4097);
        for n in [1usize, 31, 32, 33, 1023, 1024, 1025, 65_537]
            .into_iter()
            .filter(|&n| n <= limit)
        {
            if n < k {
                continue;
            }
            let data = random_data(n, d, n as u64);
            let c = random_data(k, d, 7);
            let mut lr = vec![u32::MAX; n];
            let sr = step_reference(&data, d, None, &c, k, &mut lr);
            let mut s = CudaStepper::new(gpu, &data, d, None).unwrap();
            let sg = s.step(&c, k).unwrap();
            let lg = s.labels().unwrap();
            assert_labels_match_up_to_ties(&data, d, &c, &lr, &lg, 1e-9);
            if lr == lg {
                assert_same_statistics(&sr, &sg);
                assert_eq!(sg.changed, n as u64);
            }
            assert_eq!(s.step(&c, k).unwrap().changed, 0);
            // f32 data.
            let d32: Vec<f32> = data.iter().map(|&v| v as f32).collect();
            let mut s32 = CudaStepper::new(gpu, &d32, d, None).unwrap();
            s32.step(&c, k).unwrap();
            let l32 = s32.labels().unwrap();
            assert_labels_match_up_to_ties(&data, d, &c, &lr, &l32, 1e-4);
        }
    }
}

#[test]
fn gpu_fit_equals_cpu_fit_from_the_same_centroids() {
    let Some(_gpu) = gpu_for_test("clustering gpu_fit_equals_cpu_fit") else {
        return;
    };
    for (n, d, k) in [(10_000, 2, 4), (20_000, 32, 200), (4097, 3, 3)] {
        let b = generate_blobs(n, d, k, 0.05, 5);
        let init = KMeans::new(k)
            .seed(1)
            .max_iter(1)
            .fit(b.data.view())
            .unwrap()
            .centroids;
        let p = KMeans::new(k).init(Init::Given(init));
        let cpu = p.clone().exec(Exec::Cpu).fit(b.data.view()).unwrap();
        let gpu = p.exec(Exec::Cuda).fit(b.data.view()).unwrap();
        assert_eq!(gpu.backend, gpu_runtime::Backend::Cuda);
        assert_eq!(cpu.labels, gpu.labels);
        assert_close(
            cpu.centroids.as_slice().unwrap(),
            gpu.centroids.as_slice().unwrap(),
            1e-9,
        );
        assert_eq!(
            predict(gpu.centroids.view(), b.data.view(), Exec::Cuda).unwrap(),
            gpu.labels
        );
    }
}

#[test]
fn cuda_without_gpu_is_an_error() {
    if gpu_runtime::gpu().is_ok() {
        return;
    }
    let x = array![[1.0]];
    assert!(matches!(
        KMeans::new(1).exec(Exec::Cuda).fit(x.view()),
        Err(KMeansError::Gpu(_))
    ));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Small k * d (direct distances, one leaf): the fast path is bit-identical to the reference.
    #[test]
    fn prop_fit_equals_reference(
        n in 1usize..600,
        d in 1usize..5,
        k in 1usize..6,
        seed in 0u64..1000,
        weighted in any::<bool>(),
    ) {
        let k = k.min(n);
        let x = Array2::from_shape_vec((n, d), random_data(n, d, seed)).unwrap();
        let w = Array1::from_shape_fn(n, |i| ((i * 7 + seed as usize) % 5) as f64 + if i == 0 { 1.0 } else { 0.0 });
        let p = KMeans::new(k).seed(seed).init(if seed % 2 == 0 { Init::Random } else { Init::KMeansPlusPlus });
        let (a, b) = if weighted {
            (p.fit_weighted(x.view(), w.view()).unwrap(), p.fit_reference(x.view(), Some(w.view())).unwrap())
        } else {
            (p.fit(x.view()).unwrap(), p.fit_reference(x.view(), None).unwrap())
        };
        prop_assert_eq!(&a, &b);
        prop_assert!(a.centroids.iter().all(|v| v.is_finite()));
        prop_assert!(a.labels.iter().all(|&l| (l as usize) < k));
    }

    /// Any k * d (matrix-product distances, many leaves): labels equal up to near-ties.
    #[test]
    fn prop_step_matches_reference(n in 1usize..9000, d in 1usize..24, k in 1usize..40, seed in 0u64..1000) {
        let data = random_data(n, d, seed);
        let c = random_data(k, d, seed + 1);
        let (sa, sb, _, _) = reference_and_parallel_step(&data, d, &c, k);
        prop_assert_eq!(sa.counts.iter().sum::<f64>(), sb.counts.iter().sum::<f64>());
    }
}

/// The variance behind `tol` (`mean_variance`, in strips of rows) is the plain per-column
/// variance, for widths around the strip's 64 values, row counts that leave a partial strip,
/// several blocks of rows, float32 and float64.
#[test]
fn mean_variance_is_the_columns_variance() {
    for &(n, d) in &[
        (1, 1),
        (5, 2),
        (97, 3),
        (130, 7),
        (33, 64),
        (300, 65),
        (20_000, 5),
        (41, 100),
    ] {
        let data = random_data(n, d, (n * 131 + d) as u64);
        let mut expected = 0.0;
        for t in 0..d {
            let col: Vec<f64> = data.iter().skip(t).step_by(d).copied().collect();
            let mean = col.iter().sum::<f64>() / n as f64;
            expected += col.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / n as f64;
        }
        expected /= d as f64;
        let got = crate::cpu::mean_variance(&data, d);
        assert!(
            (got - expected).abs() <= 1e-12 * expected,
            "n {n} d {d}: {got} against {expected}"
        );
        let single: Vec<f32> = data.iter().map(|&v| v as f32).collect();
        let got32 = crate::cpu::mean_variance(&single, d);
        assert!(
            (got32 - expected).abs() <= 1e-6 * expected,
            "f32 n {n} d {d}: {got32} against {expected}"
        );
    }
}
