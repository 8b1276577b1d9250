//! pde: the explicit FitzHugh–Nagumo step (one thread at the seed's N = 401, rayon at 2^20 and
//! 2^24, a batch of axons, and with decayed activity to show that subnormals are flushed),
//! Crank–Nicolson steps, and the tridiagonal solvers (single systems and strided batches,
//! f32 and f64). With a GPU: the fused kernel (N = 401, 10^4 steps per launch), the grid
//! kernel at 2^24 and the batched solve; device time is measured with CUDA events after the
//! device has finished (`explicit_gpu_timing`).

use std::time::Duration;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use gpu_runtime::Exec;
use pde::tridiag::{self, TridiagSolver};
use pde::{
    FhnParams, FhnState, NewtonOptions, Scenario, explicit_gpu_timing, explicit_run,
    explicit_run_batch, implicit_run,
};

fn params(n: usize) -> FhnParams {
    FhnParams {
        n,
        length: (n - 1) as f64 * 0.5,
        ..FhnParams::default()
    }
}

fn bench_explicit(c: &mut Criterion) {
    let mut g = c.benchmark_group("fhn_explicit");
    // The seed's grid: 1000 steps per iteration on one thread.
    let p = params(401);
    let steps = 1000u64;
    g.throughput(Throughput::Elements(401 * steps));
    let mut s = Scenario::Gaussian.initial_state(&p);
    g.bench_function("serial_n401_x1000_steps", |b| {
        b.iter(|| explicit_run(&p, &mut s, steps, Exec::Cpu).unwrap())
    });
    // Decayed activity: values around 1e-300 would be subnormal without the flush.
    let mut tiny = FhnState::rest(401);
    g.bench_function("serial_n401_x1000_steps_decayed", |b| {
        b.iter(|| {
            for (i, v) in tiny.v.iter_mut().enumerate() {
                *v = 1e-29 * (1.0 + (i % 7) as f64);
            }
            explicit_run(&p, &mut tiny, steps, Exec::Cpu).unwrap()
        })
    });
    // A batch of 64 axons of 401 nodes, 100 steps.
    let batch = 64;
    let mut v: Vec<f64> = (0..batch).flat_map(|_| s.v.clone()).collect();
    let mut w = vec![0.0; v.len()];
    g.throughput(Throughput::Elements((batch * 401 * 100) as u64));
    g.bench_function("batch_64x401_x100_steps", |b| {
        b.iter(|| explicit_run_batch(&p, &mut v, &mut w, batch, 100, Exec::Cpu).unwrap())
    });
    // Large grids with rayon (memory-bandwidth bound).
    for e in [20u32, 24] {
        let p = params(1 << e);
        let mut s = Scenario::Gaussian.initial_state(&p);
        let steps = 32; // one time-blocked pass
        g.throughput(Throughput::Elements((1u64 << e) * steps));
        g.bench_function(BenchmarkId::new("parallel", format!("2^{e}")), |b| {
            b.iter(|| explicit_run(&p, &mut s, steps, Exec::Cpu).unwrap())
        });
    }
    if let Ok(gpu) = gpu_runtime::gpu() {
        // The seed's demo: N = 401, 10^4 steps, one fused launch; kernel time only.
        for (n, batch, steps) in [
            (401usize, 1usize, 10_000u64),
            (401, 1024, 10_000),
            (1 << 24, 1, 20),
        ] {
            let p = params(n);
            let s = Scenario::Gaussian.initial_state(&p);
            let mut v: Vec<f64> = (0..batch).flat_map(|_| s.v.clone()).collect();
            let mut w = vec![0.0; v.len()];
            g.throughput(Throughput::Elements((n * batch) as u64 * steps));
            g.bench_function(format!("cuda_kernels_n{n}_batch{batch}_x{steps}"), |b| {
                b.iter_custom(|iters| {
                    let mut total = 0.0;
                    for _ in 0..iters {
                        total += explicit_gpu_timing(gpu, &p, &mut v, &mut w, batch, steps)
                            .unwrap()
                            .kernels_only;
                    }
                    Duration::from_secs_f64(total)
                })
            });
        }
    }
    g.finish();
}

fn bench_implicit(c: &mut Criterion) {
    let mut g = c.benchmark_group("fhn_implicit");
    let p = FhnParams {
        dt: 0.25,
        ..FhnParams::default()
    };
    g.throughput(Throughput::Elements(401 * 100));
    for solver in [TridiagSolver::Thomas, TridiagSolver::CyclicReduction] {
        let mut s = Scenario::Gaussian.initial_state(&p);
        let opts = NewtonOptions {
            solver,
            ..NewtonOptions::default()
        };
        g.bench_function(format!("cn_n401_x100_{solver:?}"), |b| {
            b.iter(|| implicit_run(&p, &mut s, 100, opts, Exec::Cpu).unwrap())
        });
    }
    if gpu_runtime::gpu().is_ok() {
        // The device-resident GPU path on one large axon: each run uploads v, w once and
        // downloads them once (which waits for the device), so the figure is synchronised
        // and includes the transfers.
        let n = 1 << 20;
        let p = FhnParams {
            n,
            length: (n - 1) as f64 * 0.5,
            dt: 0.25,
            ..FhnParams::default()
        };
        let mut s = Scenario::Gaussian.initial_state(&p);
        g.sample_size(10);
        g.throughput(Throughput::Elements(n as u64 * 10));
        g.bench_function("cn_n2^20_x10_cuda_with_transfers", |b| {
            b.iter(|| implicit_run(&p, &mut s, 10, NewtonOptions::default(), Exec::Cuda).unwrap())
        });
    }
    g.finish();
}

fn system<T: tridiag::Real>(n: usize) -> [Vec<T>; 4] {
    let mut st = 12345u64;
    let mut a = Vec::with_capacity(n);
    let mut b = Vec::with_capacity(n);
    let mut c = Vec::with_capacity(n);
    let mut d = Vec::with_capacity(n);
    for _ in 0..n {
        let r = (warpath_benches::splitmix64(&mut st) >> 11) as f64 / (1u64 << 53) as f64;
        a.push(T::from_f64(-0.5 - 0.4 * r));
        c.push(T::from_f64(-0.4 + 0.3 * r));
        b.push(T::from_f64(2.5 + r));
        d.push(T::from_f64(r - 0.5));
    }
    [a, b, c, d]
}

fn bench_tridiag_t<T: tridiag::Real>(c: &mut Criterion) {
    let mut g = c.benchmark_group(format!("tridiag_{}", std::any::type_name::<T>()));
    let n = 1 << 16;
    let [a, b, cc, d] = system::<T>(n);
    g.throughput(Throughput::Elements(n as u64));
    g.bench_function("thomas_2^16", |bch| {
        bch.iter(|| tridiag::thomas(&a, &b, &cc, &d).unwrap())
    });
    g.bench_function("cyclic_reduction_2^16", |bch| {
        bch.iter(|| tridiag::cyclic_reduction(&a, &b, &cc, &d).unwrap())
    });
    g.bench_function("pcr_cpu_2^16", |bch| {
        bch.iter(|| tridiag::pcr(&a, &b, &cc, &d).unwrap())
    });
    // gtsv2StridedBatch-shaped workload: 1024 systems of 401 rows.
    let (m, batch) = (401usize, 1024usize);
    let [a, b, cc, d] = system::<T>(m * batch);
    let mut x = vec![T::ZERO; m * batch];
    let mut batch_solve = |solver, exec| {
        tridiag::solve_strided_batch(&a, &b, &cc, &d, &mut x, m, m, batch, solver, exec).unwrap()
    };
    g.throughput(Throughput::Elements((m * batch) as u64));
    g.bench_function("strided_batch_1024x401_cpu", |bch| {
        bch.iter(|| batch_solve(TridiagSolver::Thomas, Exec::Cpu))
    });
    if gpu_runtime::gpu().is_ok() {
        g.bench_function("strided_batch_1024x401_cuda_with_transfers", |bch| {
            bch.iter(|| batch_solve(TridiagSolver::Pcr, Exec::Cuda))
        });
        let n = 1 << 22;
        let [a, b, cc, d] = system::<T>(n);
        g.throughput(Throughput::Elements(n as u64));
        g.bench_function("pcr_thomas_hybrid_2^22_cuda_with_transfers", |bch| {
            bch.iter(|| tridiag::solve(&a, &b, &cc, &d, TridiagSolver::Pcr, Exec::Cuda).unwrap())
        });
    }
    g.finish();
}

fn bench_tridiag(c: &mut Criterion) {
    bench_tridiag_t::<f64>(c);
    bench_tridiag_t::<f32>(c);
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(10);
    targets = bench_explicit, bench_implicit, bench_tridiag
}
criterion_main!(benches);
