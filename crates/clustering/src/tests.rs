//! Tests of the whole crate against the sequential reference.

use gpu_runtime::Exec;
use gpu_runtime::testing::gpu_for_test;
use ndarray::{Array1, Array2, array};
use proptest::prelude::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::cpu::{CpuKind, CpuStepper, step_parallel, step_reference};
use crate::cuda::CudaStepper;
use crate::data::generate_blobs;
use crate::lloyd::{Stepper, update_centroids};
use crate::{Init, KMeans, KMeansError, predict};

const SIZES: [usize; 11] = [
    1,
    2,
    31,
    32,
    33,
    1023,
    1024,
    1025,
    4099,
    4097,
    (1 << 14) + 1,
];

fn random_data(n: usize, d: usize, seed: u64) -> Vec<f64> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..n * d).map(|_| rng.random_range(-5.0..5.0)).collect()
}

fn dist2(x: &[f64], c: &[f64]) -> f64 {
    x.iter().zip(c).map(|(a, b)| (a - b) * (a - b)).sum()
}

/// Labels agree except where both centroids are at (nearly) the same distance.
fn assert_labels_match_up_to_ties(
    data: &[f64],
    d: usize,
    c: &[f64],
    a: &[u32],
    b: &[u32],
    rel: f64,
) {
    assert_eq!(a.len(), b.len());
    for (i, (&la, &lb)) in a.iter().zip(b).enumerate() {
        if la != lb {
            let x = &data[i * d..(i + 1) * d];
            let da = dist2(x, &c[la as usize * d..(la as usize + 1) * d]);
            let db = dist2(x, &c[lb as usize * d..(lb as usize + 1) * d]);
            let scale = x.iter().map(|v| v * v).sum::<f64>() + da + db + 1.0;
            assert!(
                (da - db).abs() <= rel * scale,
                "point {i}: labels {la} vs {lb}, {da} vs {db}"
            );
        }
    }
}

fn assert_close(a: &[f64], b: &[f64], rel: f64) {
    assert_eq!(a.len(), b.len());
    for (i, (x, y)) in a.iter().zip(b).enumerate() {
        assert!(
            (x - y).abs() <= rel * (1.0 + x.abs().max(y.abs())),
            "element {i}: {x} vs {y}"
        );
    }
}

#[test]
fn parallel_step_matches_reference() {
    for &(k, d) in &[(1, 1), (3, 2), (4, 7), (16, 16), (64, 8), (5, 40)] {
        for &n in &SIZES {
            if n < k {
                continue;
            }
            let data = random_data(n, d, (n * 31 + k) as u64);
            let c = random_data(k, d, 99);
            let mut la = vec![u32::MAX; n];
            let mut lb = vec![u32::MAX; n];
            let sa = step_reference(&data, d, None, &c, k, &mut la);
            let sb = step_parallel(&data, d, None, &c, k, &mut lb);
            assert_labels_match_up_to_ties(&data, d, &c, &la, &lb, 1e-12);
            if la == lb {
                assert_close(&sa.sums, &sb.sums, 1e-9);
                assert_eq!(sa.counts, sb.counts);
                assert_close(&[sa.inertia], &[sb.inertia], 1e-9);
                assert_eq!(sa.changed, n as u64);
                assert_eq!(sb.changed, n as u64);
            }
            // A second step with the same centroids changes nothing.
            let again = step_parallel(&data, d, None, &c, k, &mut lb);
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
            (step_parallel(&data, d, None, &c, k, &mut l), l)
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
    let best = KMeans::new(6)
        .init(Init::Random)
        .n_init(6)
        .seed(9)
        .fit(b.data.view())
        .unwrap();
    // Run 0 of several is the single run with the same seed.
    let one = KMeans::new(6)
        .init(Init::Random)
        .n_init(1)
        .seed(9)
        .fit(b.data.view())
        .unwrap();
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
                assert_close(&sr.sums, &sg.sums, 1e-9);
                assert_eq!(sr.counts, sg.counts);
                assert_close(&[sr.inertia], &[sg.inertia], 1e-9);
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
        let mut la = vec![u32::MAX; n];
        let mut lb = vec![u32::MAX; n];
        let sa = step_reference(&data, d, None, &c, k, &mut la);
        let sb = step_parallel(&data, d, None, &c, k, &mut lb);
        assert_labels_match_up_to_ties(&data, d, &c, &la, &lb, 1e-12);
        prop_assert_eq!(sa.counts.iter().sum::<f64>(), sb.counts.iter().sum::<f64>());
    }
}

mod io {
    use std::io::Write;

    use ndarray::Array2;

    use crate::KMeansError;
    use crate::checkpoint::{Checkpoint, Job, digest_part, to_bits};
    use crate::data::{
        NpyType, read_csv, read_matrix, read_npy, read_npy_header, read_rows, read_weights,
        read_weights_shard, shard_range, write_npy,
    };
    use crate::{Init, KMeans};

    fn dir(name: &str) -> std::path::PathBuf {
        let d = std::env::temp_dir().join(format!("clustering-io-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn csv_with_header_and_errors() {
        let d = dir("csv");
        let p = d.join("a.csv");
        std::fs::write(&p, "x,y\n1,2\n\n3.5, -4\n").unwrap();
        assert_eq!(
            read_csv(&p).unwrap(),
            ndarray::array![[1.0, 2.0], [3.5, -4.0]]
        );
        std::fs::write(&p, "1 2\n3 4 5\n").unwrap();
        assert!(matches!(read_csv(&p), Err(KMeansError::Format { .. })));
        std::fs::write(&p, "1,2\n3,oops\n").unwrap();
        let e = read_csv(&p).unwrap_err();
        assert!(e.to_string().contains("line 2"), "{e}");
        assert!(matches!(
            read_csv(&d.join("missing.csv")),
            Err(KMeansError::Io { .. })
        ));
        std::fs::write(&p, "").unwrap();
        assert_eq!(read_csv(&p).unwrap().dim(), (0, 0));
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn npy_round_trip_and_shards() {
        let d = dir("npy");
        let p = d.join("a.npy");
        let a = Array2::from_shape_fn((1025, 3), |(i, j)| i as f64 * 0.5 - j as f64);
        write_npy(&p, &a).unwrap();
        assert_eq!(read_npy(&p).unwrap(), a);
        let h = read_npy_header(&p).unwrap();
        assert_eq!((h.rows, h.cols, h.dtype), (1025, 3, NpyType::F64));
        // Shards of any count cover every row exactly once, in order.
        for ranks in [1u64, 2, 3, 7, 1025, 2000] {
            let mut rows = Vec::new();
            for r in 0..ranks {
                let s = shard_range(1025, ranks, r);
                rows.extend(read_rows(&p, h.offset, h.dtype, s.start, s.end - s.start, 3).unwrap());
            }
            assert_eq!(
                rows,
                a.iter().copied().collect::<Vec<_>>(),
                "ranks = {ranks}"
            );
        }
        assert!(read_rows(&p, h.offset, h.dtype, 1000, 100, 3).is_err());
        // An f32 file written by hand (numpy's layout).
        let mut header = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }".to_string();
        while !(10 + header.len() + 1).is_multiple_of(64) {
            header.push(' ');
        }
        header.push('\n');
        let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
        bytes.extend((header.len() as u16).to_le_bytes());
        bytes.extend(header.as_bytes());
        for v in [1.5f32, -2.0, 3.25, 4.0] {
            bytes.extend(v.to_le_bytes());
        }
        let p32 = d.join("b.npy");
        std::fs::File::create(&p32)
            .unwrap()
            .write_all(&bytes)
            .unwrap();
        assert_eq!(
            read_npy(&p32).unwrap(),
            ndarray::array![[1.5, -2.0], [3.25, 4.0]]
        );
        // Truncated, wrong magic, Fortran order: format errors.
        std::fs::write(&p32, &bytes[..bytes.len() - 4]).unwrap();
        assert!(matches!(read_npy(&p32), Err(KMeansError::Format { .. })));
        std::fs::write(&p32, b"not an npy file at all").unwrap();
        assert!(matches!(read_npy(&p32), Err(KMeansError::Format { .. })));
        let fortran = String::from_utf8_lossy(&bytes).replace("False", "True ");
        std::fs::write(&p32, fortran.as_bytes()).unwrap();
        assert!(read_npy(&p32).is_err());
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn weights_files_npy_and_raw() {
        let d = dir("weights");
        // Raw f64, read whole and by shard.
        let raw = d.join("w.bin");
        let w = [0.5f64, 0.0, 2.0, 1e300, 7.0];
        std::fs::write(
            &raw,
            w.iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<u8>>(),
        )
        .unwrap();
        assert_eq!(read_weights(&raw).unwrap(), w);
        assert_eq!(read_weights_shard(&raw, 5, 3..5).unwrap(), w[3..]);
        assert!(matches!(
            read_weights_shard(&raw, 6, 0..2),
            Err(KMeansError::ShapeMismatch {
                expected: 6,
                found: 5,
                ..
            })
        ));
        assert!(matches!(
            read_weights_shard(&raw, 5, 4..6),
            Err(KMeansError::InvalidParameter(_))
        ));
        // A (n, 1) .npy file holds weights too; (n, 2) does not.
        let npy = d.join("w.npy");
        write_npy(&npy, &Array2::from_shape_vec((5, 1), w.to_vec()).unwrap()).unwrap();
        assert_eq!(read_weights(&npy).unwrap(), w);
        assert_eq!(read_matrix(&npy).unwrap().dim(), (5, 1));
        write_npy(&npy, &Array2::zeros((5, 2))).unwrap();
        let e = read_weights(&npy).unwrap_err();
        assert!(
            matches!(&e, KMeansError::Format { reason, .. } if reason.contains("1-D")),
            "{e}"
        );
        // A raw file that is not whole f64 values; a missing file.
        std::fs::write(&raw, [0u8; 12]).unwrap();
        assert!(matches!(
            read_weights(&raw),
            Err(KMeansError::Format { .. })
        ));
        assert!(matches!(
            read_weights_shard(&d.join("missing"), 1, 0..1),
            Err(KMeansError::Io { .. })
        ));
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn weights_files_csv() {
        let d = dir("weights-csv");
        let w = [0.5f64, 0.0, 2.0, 1e300, 7.0];
        let raw = d.join("w.f64");
        std::fs::write(
            &raw,
            w.iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<u8>>(),
        )
        .unwrap();
        // A header, blank lines, spaces; `.txt` is text too. Every shard equals the binary's.
        let csv = d.join("w.csv");
        std::fs::write(&csv, "weight\n0.5\n0\n\n 2 \n1e300\n7\n").unwrap();
        assert_eq!(read_weights(&csv).unwrap(), w);
        for (lo, hi) in [(0, 5), (0, 2), (2, 5), (3, 3)] {
            assert_eq!(
                read_weights_shard(&csv, 5, lo..hi).unwrap(),
                read_weights_shard(&raw, 5, lo..hi).unwrap()
            );
        }
        let txt = d.join("w.txt");
        std::fs::write(&txt, "0.5\n0\n2\n1e300\n7").unwrap();
        assert_eq!(read_weights(&txt).unwrap(), w);
        // Malformed lines name their line and column (warpath-io's table grammar); a second
        // column is an error.
        std::fs::write(&csv, "w\n1\n2\nx\n").unwrap();
        let e = read_weights(&csv).unwrap_err();
        assert!(
            matches!(&e, KMeansError::Format { reason, .. } if reason.starts_with("line 4, column 1:")),
            "{e}"
        );
        std::fs::write(&csv, "1\n2,3\n").unwrap();
        let e = read_weights(&csv).unwrap_err();
        assert!(e.to_string().contains("line 2, column 1"), "{e}");
        std::fs::write(&csv, "1,2\n").unwrap();
        let e = read_weights(&csv).unwrap_err();
        assert!(e.to_string().contains("one number per line"), "{e}");
        // A count other than the data's.
        std::fs::write(&csv, "1\n2\n").unwrap();
        assert!(matches!(
            read_weights_shard(&csv, 3, 0..1),
            Err(KMeansError::ShapeMismatch {
                expected: 3,
                found: 2,
                ..
            })
        ));
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn digest_parts_do_not_depend_on_the_sharding_but_on_every_value() {
        let w: Vec<f64> = (0..1001).map(|i| (i % 7) as f64 * 0.25).collect();
        let whole = digest_part(0, &w);
        for ranks in [2u64, 3, 7, 1001] {
            let parts = (0..ranks).fold(0, |acc, r| {
                let s = shard_range(w.len() as u64, ranks, r);
                acc ^ digest_part(s.start, &w[s.start as usize..s.end as usize])
            });
            assert_eq!(parts, whole, "ranks = {ranks}");
        }
        let mut other = w.clone();
        other[500] += 0.25;
        assert_ne!(digest_part(0, &other), whole);
        other = w.clone();
        other.swap(1, 2);
        assert_ne!(digest_part(0, &other), whole);
        // -0.0 is 0.0.
        other = w.clone();
        other[0] = -0.0;
        assert_eq!(digest_part(0, &other), whole);
    }

    #[test]
    fn checkpoints_are_exact_and_checked() {
        let d = dir("ck");
        let p = d.join("ck.json");
        let c = vec![0.1, 1.0 / 3.0, -2.5e-300, f64::MAX];
        let ck = Checkpoint {
            version: 2,
            n: 10,
            d: 2,
            k: 2,
            iteration: 7,
            tol_abs: 1e-9,
            converged: false,
            centroid_bits: to_bits(&c),
            initial_bits: to_bits(&c),
            weights_digest: Some(u64::MAX),
            job: None,
        };
        ck.write_atomic(&p).unwrap();
        let back = Checkpoint::read(&p).unwrap();
        assert_eq!(back, ck);
        assert_eq!(back.centroids(), c);
        // A version-1 checkpoint (no weights digest) reads as unweighted.
        let mut v1: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&p).unwrap()).unwrap();
        v1.as_object_mut().unwrap().remove("weights_digest");
        std::fs::write(&p, v1.to_string()).unwrap();
        assert_eq!(Checkpoint::read(&p).unwrap().weights_digest, None);
        // Overwriting leaves no temporary files behind.
        ck.write_atomic(&p).unwrap();
        assert_eq!(std::fs::read_dir(&d).unwrap().count(), 1);
        std::fs::write(&p, "{\"garbage\": 1}").unwrap();
        assert!(matches!(
            Checkpoint::read(&p),
            Err(KMeansError::Format { .. })
        ));
        let mut bad = ck.clone();
        bad.k = 3;
        bad.write_atomic(&p).unwrap();
        assert!(matches!(
            Checkpoint::read(&p),
            Err(KMeansError::Format { .. })
        ));
        // Unknown versions, and a version 3 without its job, are refused.
        for (version, job) in [(0, None), (4, None), (3, None)] {
            let bad = Checkpoint {
                version,
                job,
                ..ck.clone()
            };
            bad.write_atomic(&p).unwrap();
            let e = Checkpoint::read(&p).unwrap_err();
            assert!(matches!(e, KMeansError::Format { .. }), "{e}");
        }
        std::fs::remove_dir_all(&d).unwrap();
    }

    /// What differs, or `None` when `ck` may be resumed by `job`.
    fn mismatch(ck: &Checkpoint, job: &Job<'_>) -> Option<(&'static str, String, String)> {
        match ck.check_resume("ck.json".as_ref(), job) {
            Ok(()) => None,
            Err(KMeansError::CheckpointMismatch {
                path,
                what,
                checkpoint,
                run,
            }) => {
                assert_eq!(path, "ck.json");
                Some((what, checkpoint, run))
            }
            Err(e) => panic!("not a CheckpointMismatch: {e}"),
        }
    }

    #[test]
    fn resume_is_refused_for_another_job() {
        let given = ndarray::array![[0.0, 1.0], [2.0, 3.0]];
        let pp = KMeans::new(2).seed(5).tol(1e-4).max_iter(20);
        let job = Job {
            params: &pp,
            n: 10,
            d: 2,
            data_digest: 0xda7a,
            weights_digest: None,
        };
        let ck = Checkpoint {
            version: 3,
            n: 10,
            d: 2,
            k: 2,
            iteration: 7,
            tol_abs: 1e-9,
            converged: false,
            centroid_bits: to_bits(&[0.5; 4]),
            initial_bits: to_bits(given.as_slice().unwrap()),
            weights_digest: None,
            job: Some(job.recorded()),
        };
        assert_eq!(mismatch(&ck, &job), None);
        let says = |what: &'static str, ck: &str, run: &str| Some((what, ck.into(), run.into()));
        let run_on = |ck: &Checkpoint, params: &KMeans| mismatch(ck, &Job { params, ..job });
        let run = |params: &KMeans| run_on(&ck, params);
        // Another seed, init, tol, k.
        assert_eq!(run(&pp.clone().seed(6)), says("seed", "5", "6"));
        assert_eq!(
            run(&pp.clone().init(Init::Random)),
            says("init", "k-means++", "random")
        );
        assert_eq!(
            run(&pp.clone().init(Init::Given(given.clone()))),
            says("init", "k-means++", "given")
        );
        assert_eq!(run(&pp.clone().tol(1e-3)), says("tol", "0.0001", "0.001"));
        let other = KMeans::new(3).seed(5).tol(1e-4).max_iter(20);
        assert_eq!(run(&other), says("k (clusters)", "2", "3"));
        // Other data shape or values, other weights.
        assert_eq!(
            mismatch(&ck, &Job { n: 11, ..job }).map(|m| m.0),
            Some("n (points)")
        );
        assert_eq!(
            mismatch(&ck, &Job { d: 3, ..job }).map(|m| m.0),
            Some("d (dimensions)")
        );
        let r = mismatch(
            &ck,
            &Job {
                data_digest: 0xbad,
                ..job
            },
        );
        assert_eq!(
            r,
            Some((
                "data values",
                "digest 000000000000da7a".into(),
                "digest 0000000000000bad".into()
            ))
        );
        let r = mismatch(
            &ck,
            &Job {
                weights_digest: Some(1),
                ..job
            },
        );
        assert_eq!(
            r,
            Some((
                "sample weights",
                "no sample weights".into(),
                "sample weights with digest 0000000000000001".into()
            ))
        );
        // max_iter: any value at or past the checkpoint's iteration continues the same run.
        assert_eq!(run(&pp.clone().max_iter(7)), None);
        assert_eq!(run(&pp.clone().max_iter(300)), None);
        assert_eq!(
            run(&pp.clone().max_iter(6)),
            says("max_iter", "7 iterations done", "max_iter = 6")
        );
        // Given centroids: the seed plays no part; other centroids are another job.
        let g = pp.clone().init(Init::Given(given.clone()));
        let gck = Checkpoint {
            job: Some(Job { params: &g, ..job }.recorded()),
            ..ck.clone()
        };
        assert_eq!(gck.job.as_ref().unwrap().seed, None);
        assert_eq!(run_on(&gck, &g), None);
        assert_eq!(run_on(&gck, &g.clone().seed(99)), None);
        let mut moved = given.clone();
        moved[[1, 1]] = 3.5;
        let other = g.clone().init(Init::Given(moved));
        assert_eq!(run_on(&gck, &other).map(|m| m.0), Some("given centroids"));
        // Version 2 records no init, seed, tol or data digest: those are not checked; the
        // shape, weights, given centroids and max_iter still are.
        let v2 = Checkpoint {
            version: 2,
            job: None,
            ..ck.clone()
        };
        let other = pp.clone().seed(6).tol(1.0);
        let job2 = Job {
            params: &other,
            data_digest: 1,
            ..job
        };
        assert_eq!(mismatch(&v2, &job2), None);
        assert_eq!(
            mismatch(&v2, &Job { n: 9, ..job }).map(|m| m.0),
            Some("n (points)")
        );
        let other = g.clone().init(Init::Given(given.clone() * 2.0));
        assert_eq!(run_on(&v2, &other).map(|m| m.0), Some("given centroids"));
        assert_eq!(
            run_on(&v2, &pp.clone().max_iter(3)).map(|m| m.0),
            Some("max_iter")
        );
        // The message names both sides.
        let reseeded = pp.clone().seed(6);
        let e = ck.check_resume(
            "ck.json".as_ref(),
            &Job {
                params: &reseeded,
                ..job
            },
        );
        assert_eq!(
            e.unwrap_err().to_string(),
            "ck.json: the checkpoint belongs to another job: seed: checkpoint says 5, this run says 6"
        );
    }
}

/// Every algorithm gives plain Lloyd's result, bit for bit: labels, centroids, inertia and
/// iteration count, on f32 and f64, small and large `d` and `k` (direct and product paths),
/// including data with exact ties and far from the origin.
#[test]
fn every_algorithm_equals_lloyd_bit_for_bit() {
    let cases: &[(usize, usize, usize, f64)] = &[
        (3000, 2, 5, 0.0),
        (2500, 3, 40, 0.0),
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

/// Asserts that every algorithm gives plain Lloyd's fit of `data` from `init` with `max_iter`
/// iterations, bit for bit (labels, iterations, inertia, centroids), in f64 and in f32.
fn assert_every_algorithm_is_lloyd(
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
        step_parallel(&data, d, None, &c, k, &mut lb);
        assert_eq!(la, lb, "f64 n {n} d {d} k {k}");
        step_reference(&f32data, d, None, &c, k, &mut la);
        step_parallel(&f32data, d, None, &c, k, &mut lb);
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
        let a = step_leaf(x, d, w, None, &small, &mut la);
        let b = step_leaf(x, d, w, None, &general, &mut lb);
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
    use crate::lloyd::{LloydParams, ShiftLimit, lloyd};
    // (d = 4: the bounds' first step takes the direct path, so a run of 12 steps never starts
    // them; 40 steps do, after ADAPTIVE_DIRECT_MIN_PLAIN plain ones.)
    for (n, d, k, spread, max_iter) in [
        (3000, 4, 130, 0.05, 12),
        (3000, 4, 130, 5.0, 40),
        (2000, 16, 150, 5.0, 12),
    ] {
        let (_, data, c) = blobs_and_first_centres(n, d, k, k / 2, spread, (n + k) as u64);
        let p = LloydParams {
            k,
            max_iter,
            limit: ShiftLimit::Absolute(0.0),
            start_iteration: 0,
            final_labels: true,
        };
        let mut plain = CpuStepper::new(&data, d, None, CpuKind::Parallel);
        let want = lloyd(&mut plain, c.clone(), &p, |_, _, _| Ok(())).unwrap();
        // Plain steps taken to last as measured, no time (the first pruned step gives the
        // bounds up) and forever (the bounds are kept).
        for plain_secs in [None, Some(0.0), Some(f64::INFINITY)] {
            let mut s = BoundsStepper::new(&data, d, None, 8).adaptive(true);
            if let Some(secs) = plain_secs {
                s.force_plain_secs(secs);
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
            assert_eq!(s.labels, plain.labels);
        }
    }
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
            assert_eq!(plain.labels, pruned.labels);
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
            assert_eq!(plain.labels, pruned.labels, "d {d} k {k} iteration {it}");
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
