//! assignment: every solver on uniform random matrices; the batch API; with a GPU, the CUDA
//! auction (the solve returns host data, so the device has finished when the clock stops).
//!
//! `cargo bench -p warpath-benches --bench assignment -- --warm-up-time 1 --measurement-time 3`

use assignment::experiments::{int_matrix, uniform_matrix};
use assignment::{Sense, Solver, solve, solve_batch};
use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use gpu_runtime::Exec;

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

fn bench_batch(c: &mut Criterion) {
    let mut g = c.benchmark_group("lap_batch");
    g.sample_size(10);
    let mats: Vec<_> = (0..100).map(|s| uniform_matrix(100, 100, s)).collect();
    let views: Vec<_> = mats.iter().map(|m| m.view()).collect();
    g.bench_function("jv_100x100x100", |b| {
        b.iter(|| solve_batch(&views, Solver::JonkerVolgenant, Sense::Minimize, Exec::Cpu))
    });
    g.finish();
}

criterion_group!(benches, bench_solvers, bench_batch);
criterion_main!(benches);
