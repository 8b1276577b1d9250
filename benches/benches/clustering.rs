//! clustering: k-means per-iteration cost of the sequential reference, the rayon path and
//! (with a GPU) the CUDA path, on the seed's data (natural clusters at +-0.25 in each
//! dimension), varying N, d and k as in the seed's experiments. Every fit runs exactly
//! `ITERS` iterations from the same initial centroids (tol = 0 and no convergence in that
//! many steps), so time / `ITERS` is the time per iteration. GPU fits download the statistics
//! every iteration, so the clock stops after the device has finished.

use clustering::{Init, KMeans};
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use gpu_runtime::Exec;
use ndarray::Array2;
use warpath_benches::splitmix64;

const ITERS: usize = 5;

/// `n` points around `k` centres with coordinates +-0.25, noise uniform in +-0.2.
fn seed_data(n: usize, d: usize, k: usize) -> (Array2<f64>, Array2<f64>) {
    let mut s = 0x5eed_u64 ^ ((n * 31 + d * 7 + k) as u64);
    let mut unit = || (splitmix64(&mut s) >> 11) as f64 / (1u64 << 53) as f64;
    let centres = Array2::from_shape_fn((k, d), |_| if unit() < 0.5 { -0.25 } else { 0.25 });
    let mut x = Array2::zeros((n, d));
    for i in 0..n {
        let c = i % k;
        for t in 0..d {
            x[[i, t]] = centres[[c, t]] + (unit() - 0.5) * 0.4;
        }
    }
    // Initial centroids: k spread-out data rows (deterministic).
    let init = Array2::from_shape_fn((k, d), |(j, t)| x[[(j * 7919) % n, t]]);
    (x, init)
}

fn run(c: &mut Criterion, group: &str, cases: &[(usize, usize, usize)], reference_max_n: usize) {
    let mut g = c.benchmark_group(group);
    g.sample_size(10);
    let gpu = gpu_runtime::gpu().is_ok();
    for &(n, d, k) in cases {
        let (x, init) = seed_data(n, d, k);
        let p = KMeans::new(k)
            .init(Init::Given(init))
            .max_iter(ITERS)
            .tol(0.0);
        let id = format!("n={n}/d={d}/k={k}");
        g.throughput(Throughput::Elements((n * ITERS) as u64));
        if n <= reference_max_n {
            g.bench_with_input(BenchmarkId::new("sequential", &id), &x, |b, x| {
                b.iter(|| p.fit_reference(x.view(), None).unwrap())
            });
        }
        g.bench_with_input(BenchmarkId::new("rayon", &id), &x, |b, x| {
            b.iter(|| p.clone().exec(Exec::Cpu).fit(x.view()).unwrap())
        });
        if gpu {
            g.bench_with_input(BenchmarkId::new("cuda", &id), &x, |b, x| {
                b.iter(|| p.clone().exec(Exec::Cuda).fit(x.view()).unwrap())
            });
        }
    }
    g.finish();
}

fn vary_n(c: &mut Criterion) {
    let cases: Vec<_> = [10usize, 1_000, 100_000, 1_000_000]
        .iter()
        .map(|&n| (n, 2, 2))
        .collect();
    run(c, "kmeans_vary_n_d2_k2", &cases, 1_000_000);
}

fn vary_d(c: &mut Criterion) {
    let cases: Vec<_> = [2usize, 16, 128]
        .iter()
        .map(|&d| (100_000, d, 16))
        .collect();
    run(c, "kmeans_vary_d_n1e5_k16", &cases, 100_000);
}

fn vary_k(c: &mut Criterion) {
    let cases: Vec<_> = [2usize, 16, 128]
        .iter()
        .map(|&k| (100_000, 16, k))
        .collect();
    run(c, "kmeans_vary_k_n1e5_d16", &cases, 100_000);
}

/// The scikit-learn comparison sizes (see crates/clustering/scripts/compare_sklearn.py).
fn sklearn_sizes(c: &mut Criterion) {
    run(
        c,
        "kmeans_sklearn_sizes",
        &[(100_000, 2, 4), (1_000_000, 16, 64)],
        0,
    );
}

criterion_group!(benches, vary_n, vary_d, vary_k, sklearn_sizes);
criterion_main!(benches);
