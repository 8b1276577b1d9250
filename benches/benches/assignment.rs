//! assignment: every solver on uniform random matrices; Jonker–Volgenant on tied integers in
//! its native element types; the sparse solver; the batch APIs; with a GPU, the CUDA auction,
//! dense and CSR (the solve returns host data, so the device has finished when the clock
//! stops). The comparison with scipy, lap and lapjv is `crates/assignment/scripts/lap_peers.sh`.
//!
//! `cargo bench -p warpath-benches --bench assignment -- --warm-up-time 1 --measurement-time 3`

use assignment::generate::{int_matrix, sparse_matrix, uniform_matrix};
use assignment::sparse::{Csr, auction as sparse_auction, min_weight_full_matching};
use assignment::{Cost, Sense, Solver, linear_sum_assignment_batch, solve, solve_batch};
use criterion::measurement::WallTime;
use criterion::{BenchmarkGroup, BenchmarkId, Criterion, criterion_group, criterion_main};
use gpu_runtime::Exec;
use ndarray::Array2;

/// Jonker–Volgenant (minimising, on the CPU) on the square matrix `m` in its own cost type,
/// as benchmark `name` at size `m.nrows()`.
fn bench_jv<T: Cost>(g: &mut BenchmarkGroup<'_, WallTime>, name: &str, m: &Array2<T>) {
    g.bench_with_input(BenchmarkId::new(name, m.nrows()), m, |b, m| {
        b.iter(|| {
            solve(
                m.view(),
                Solver::JonkerVolgenant,
                Sense::Minimize,
                Exec::Cpu,
            )
            .unwrap()
        })
    });
}

fn bench_solvers(c: &mut Criterion) {
    let mut g = c.benchmark_group("lap");
    g.sample_size(10);
    let cases: &[(Solver, &[usize])] = &[
        (Solver::BruteForce, &[8]),
        (Solver::Greedy, &[1000]),
        (Solver::Hungarian, &[100, 500]),
        (Solver::JonkerVolgenant, &[100, 500, 1000, 2000]),
        (Solver::Auction, &[100, 500]),
    ];
    for &(solver, sizes) in cases {
        for &n in sizes {
            let m = uniform_matrix(n, n, n as u64);
            g.bench_with_input(BenchmarkId::new(solver.name(), n), &m, |b, m| {
                b.iter(|| solve(m.view(), solver, Sense::Minimize, Exec::Cpu).unwrap())
            });
        }
    }
    // Tied integers in their own type (i64 and i32: integer arithmetic, no f64 copy).
    for n in [1000usize, 2000] {
        let m = int_matrix(n, n, 99, n as u64);
        let m32 = m.mapv(|v| v as i32);
        bench_jv(&mut g, "jv_int100_i64", &m);
        bench_jv(&mut g, "jv_int100_i32", &m32);
    }
    // Integer costs: the auction is exact there.
    let m = int_matrix(500, 500, 1000, 5);
    g.bench_function("auction_int/500", |b| {
        b.iter(|| solve(m.view(), Solver::Auction, Sense::Minimize, Exec::Cpu).unwrap())
    });
    if gpu_runtime::gpu().is_ok() {
        for n in [1000usize, 5000] {
            let m = int_matrix(n, n, 1000, n as u64);
            g.bench_with_input(BenchmarkId::new("auction_cuda_int", n), &m, |b, m| {
                b.iter(|| solve(m.view(), Solver::Auction, Sense::Minimize, Exec::Cuda).unwrap())
            });
        }
    }
    g.finish();
}

fn bench_sparse(c: &mut Criterion) {
    let mut g = c.benchmark_group("lap_sparse");
    g.sample_size(10);
    for n in [10_000usize, 30_000] {
        let (p, i, v) = sparse_matrix(n, 10);
        let m = Csr::new(n, n, &p[..], &i[..], &v[..]).unwrap();
        g.bench_function(BenchmarkId::new("lapjvsp", n), |b| {
            b.iter(|| min_weight_full_matching(&m, Sense::Minimize).unwrap())
        });
        g.bench_function(BenchmarkId::new("auction_cpu", n), |b| {
            b.iter(|| sparse_auction(&m, Sense::Minimize, Exec::Cpu).unwrap())
        });
        if gpu_runtime::gpu().is_ok() {
            g.bench_function(BenchmarkId::new("auction_cuda", n), |b| {
                b.iter(|| sparse_auction(&m, Sense::Minimize, Exec::Cuda).unwrap())
            });
        }
    }
    g.finish();
}

fn bench_batch(c: &mut Criterion) {
    let mut g = c.benchmark_group("lap_batch");
    g.sample_size(10);
    let mats: Vec<_> = (0..100).map(|s| uniform_matrix(100, 100, s)).collect();
    let views: Vec<_> = mats.iter().map(|m| m.view()).collect();
    g.bench_function("jv_100x100x100", |b| {
        b.iter(|| solve_batch(&views, Solver::JonkerVolgenant, Sense::Minimize, Exec::Cpu))
    });
    // The stack API (one workspace per thread): 10,000 of 30 x 30 and 1,000 of 200 x 200.
    for (b_, n) in [(10_000usize, 30usize), (1_000, 200)] {
        let stack = assignment::ndarray::Array3::from_shape_fn((b_, n, n), |(k, i, j)| {
            ((k * 7919 + i * 104729 + j * 1299709) % 1000) as f64 / 1000.0
        });
        g.bench_function(BenchmarkId::new("stack", format!("{b_}x{n}x{n}")), |b| {
            b.iter(|| linear_sum_assignment_batch(stack.view(), Sense::Minimize).unwrap())
        });
    }
    g.finish();
}

criterion_group!(benches, bench_solvers, bench_sparse, bench_batch);
criterion_main!(benches);
