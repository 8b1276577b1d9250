//! combinatorics: permutations written to a buffer (ours on 1 thread and on all cores, beside
//! `itertools::permutations` and a plain `next_permutation` loop), permutation search, and
//! De Bruijn sequences (FKM, Euler). With a GPU: kernel-only device time of the batch and
//! search kernels (the clock stops after the device has finished).

use std::hint::black_box;

use combinatorics::{
    BatchOptions, Objective, de_bruijn_euler, de_bruijn_fkm, next_permutation, permutations_into,
    permutations_into_device, permutations_on_device, search_permutations_range,
};
use criterion::measurement::WallTime;
use criterion::{BenchmarkGroup, Criterion, Throughput, criterion_group, criterion_main};
use gpu_runtime::{DeviceBuffer, Exec, Gpu};
use itertools::Itertools;
use warpath_benches::splitmix64;

/// Permutations of 12 per measured batch: 2^24 (201 MB of output).
const COUNT: u64 = 1 << 24;
const N: usize = 12;

/// Benchmark `name`: the device time of writing the first `count` permutations of [`N`] into
/// `d` on the device with `opts`, one timer around all the iterations.
fn bench_kernel_only(
    g: &mut BenchmarkGroup<'_, WallTime>,
    gpu: &Gpu,
    name: &str,
    count: u64,
    d: &mut DeviceBuffer<u8>,
    opts: &BatchOptions,
) {
    g.bench_function(name, |b| {
        b.iter_custom(|iters| {
            let timer = gpu.timer().unwrap();
            for _ in 0..iters {
                permutations_into_device(gpu, N, 0, count, d, opts).unwrap();
            }
            std::time::Duration::from_secs_f64(timer.stop().unwrap())
        })
    });
}

fn bench_batch(c: &mut Criterion) {
    let mut out = vec![0u8; COUNT as usize * N];
    let mut g = c.benchmark_group("permutations_n12");
    g.sample_size(10);
    g.throughput(Throughput::Elements(COUNT));
    g.bench_function("cpu_rayon", |b| {
        b.iter(|| permutations_into(N, 1_000_003, COUNT, &mut out, Exec::Cpu).unwrap())
    });
    let one = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    g.bench_function("cpu_1_thread", |b| {
        b.iter(|| {
            one.install(|| permutations_into(N, 1_000_003, COUNT, &mut out, Exec::Cpu).unwrap())
        })
    });
    g.bench_function("next_permutation_loop", |b| {
        b.iter(|| {
            let mut p: Vec<u8> = (0..N as u8).collect();
            for dst in out.chunks_exact_mut(N) {
                dst.copy_from_slice(&p);
                next_permutation(&mut p);
            }
        })
    });
    g.bench_function("itertools_permutations", |b| {
        b.iter(|| {
            for (dst, p) in out.chunks_exact_mut(N).zip((0..N as u8).permutations(N)) {
                dst.copy_from_slice(&p);
            }
        })
    });
    if let Ok(gpu) = gpu_runtime::gpu() {
        let mut d = permutations_on_device(gpu, N, 0, COUNT, &BatchOptions::default()).unwrap();
        for k in [1u32, 2, 4, 8, 16] {
            let opts = BatchOptions {
                gpu_steps_per_thread: k,
                ..Default::default()
            };
            let name = format!("cuda_kernel_only_k{k}");
            bench_kernel_only(&mut g, gpu, &name, COUNT, &mut d, &opts);
        }
        drop(d);
        // All 12! = 479,001,600 permutations (5.7 GB) on the device: the target is
        // under 10 ms on an H100.
        let all = 479_001_600u64;
        if gpu.ensure_fits(all * N as u64 + (1 << 28)).is_ok() {
            let mut d = permutations_on_device(gpu, N, 0, all, &BatchOptions::default()).unwrap();
            g.throughput(Throughput::Elements(all));
            for k in [2u32, 4, 8] {
                let opts = BatchOptions {
                    gpu_steps_per_thread: k,
                    ..Default::default()
                };
                let name = format!("cuda_kernel_only_all_12!_k{k}");
                bench_kernel_only(&mut g, gpu, &name, all, &mut d, &opts);
            }
            g.throughput(Throughput::Elements(COUNT));
        }
        g.bench_function("cuda_with_download", |b| {
            b.iter(|| permutations_into(N, 0, COUNT, &mut out, Exec::Cuda).unwrap())
        });
    }
    g.finish();
}

/// Process CPU time (all threads) of `f`: on a shared, loaded machine wall time mostly
/// measures the other tenants; CPU time measures our code.
fn cpu_time(mut f: impl FnMut()) -> std::time::Duration {
    let now = || {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: clock_gettime writes one timespec, which we own.
        unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
        std::time::Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
    };
    let t0 = now();
    f();
    now() - t0
}

/// The same work timed in CPU seconds: throughput per core-second (multiply by the number of
/// busy threads for the wall-clock rate on an idle machine).
fn bench_cpu_time(c: &mut Criterion) {
    let mut out = vec![0u8; COUNT as usize * N];
    let mut g = c.benchmark_group("per_cpu_second");
    g.sample_size(10);
    g.throughput(Throughput::Elements(COUNT));
    let one = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    g.bench_function("permutations_n12_1_thread", |b| {
        b.iter_custom(|iters| {
            cpu_time(|| {
                for _ in 0..iters {
                    one.install(|| {
                        permutations_into(N, 1_000_003, COUNT, &mut out, Exec::Cpu).unwrap()
                    });
                }
            })
        })
    });
    g.bench_function("permutations_n12_rayon", |b| {
        b.iter_custom(|iters| {
            cpu_time(|| {
                for _ in 0..iters {
                    permutations_into(N, 1_000_003, COUNT, &mut out, Exec::Cpu).unwrap();
                }
            })
        })
    });
    g.bench_function("itertools_permutations_n12", |b| {
        b.iter_custom(|iters| {
            cpu_time(|| {
                for _ in 0..iters {
                    for (dst, p) in out.chunks_exact_mut(N).zip((0..N as u8).permutations(N)) {
                        dst.copy_from_slice(&p);
                    }
                }
            })
        })
    });
    let mut st = 5u64;
    let m: Vec<f64> = (0..N * N)
        .map(|_| (splitmix64(&mut st) % 1000) as f64)
        .collect();
    g.bench_function("search_assignment_n12", |b| {
        b.iter_custom(|iters| {
            cpu_time(|| {
                for _ in 0..iters {
                    black_box(
                        search_permutations_range(
                            N,
                            &Objective::Assignment(&m),
                            0,
                            COUNT,
                            Exec::Cpu,
                        )
                        .unwrap(),
                    );
                }
            })
        })
    });
    g.throughput(Throughput::Elements(1 << 24));
    g.bench_function("fkm_B(2,24)", |b| {
        b.iter_custom(|iters| {
            cpu_time(|| {
                for _ in 0..iters {
                    black_box(de_bruijn_fkm(2, 24).unwrap());
                }
            })
        })
    });
    g.finish();
}

fn bench_search(c: &mut Criterion) {
    let mut s = 5u64;
    let m: Vec<f64> = (0..N * N)
        .map(|_| (splitmix64(&mut s) % 1000) as f64)
        .collect();
    let count = 1u64 << 24;
    let mut g = c.benchmark_group("search_n12");
    g.sample_size(10);
    g.throughput(Throughput::Elements(count));
    for obj in [Objective::Assignment(&m), Objective::Tour(&m)] {
        g.bench_function(format!("cpu_{}", obj.name()), |b| {
            b.iter(|| search_permutations_range(N, &obj, 0, count, Exec::Cpu).unwrap())
        });
        if gpu_runtime::gpu().is_ok() {
            // Whole 12! on the GPU (the target: under 50 ms on an H100); includes one
            // synchronising download of the per-block results.
            g.bench_function(format!("cuda_{}_all_12!", obj.name()), |b| {
                b.iter(|| search_permutations_range(N, &obj, 0, 479_001_600, Exec::Cuda).unwrap())
            });
        }
    }
    g.finish();
}

fn bench_de_bruijn(c: &mut Criterion) {
    let mut g = c.benchmark_group("de_bruijn");
    g.sample_size(10);
    for (k, n) in [(2usize, 24usize), (10, 7)] {
        let len = (k as u64).pow(n as u32);
        g.throughput(Throughput::Elements(len));
        g.bench_function(format!("fkm_B({k},{n})"), |b| {
            b.iter(|| de_bruijn_fkm(k, n).unwrap())
        });
        g.bench_function(format!("euler_B({k},{n})"), |b| {
            b.iter(|| de_bruijn_euler(k, n).unwrap())
        });
    }
    g.finish();
}

criterion_group!(
    benches,
    bench_batch,
    bench_cpu_time,
    bench_search,
    bench_de_bruijn
);
criterion_main!(benches);
