//! gpu-primitives: CPU radix sort against `slice::sort_unstable`, rayon's `par_sort_unstable`
//! and the `voracious_radix_sort` crate in the same run; scans; the "distinct of N ints in
//! [0, 1000)" experiment; and, with a GPU, device-only times (CUDA events: the clock stops after
//! the device finished) and end-to-end times including transfers.
//!
//! Sizes (environment variables, so the figures in the README can be reproduced exactly):
//! - `WARPATH_SORT_N` keys for the sort group (default 10^7; the target is stated at 10^8),
//! - `WARPATH_DISTINCT_LOG2` = `lo..=hi` range of log2 N for the distinct experiment
//!   (default `21..=24`; the full experiment is `21..=28`),
//! - `WARPATH_GPU_LOG2` log2 of the GPU sort / scan sizes (default 28).
//!
//! `cargo bench -p warpath-benches --bench gpu-primitives -- --warm-up-time 1 --measurement-time 3`

use std::time::Duration;

use criterion::measurement::WallTime;
use criterion::{
    BatchSize, BenchmarkGroup, BenchmarkId, Criterion, Throughput, criterion_group, criterion_main,
};
use gpu_primitives::{DistinctOptions, Exec, distinct_with, exclusive_scan, radix_sort};
use gpu_runtime::Gpu;
use rayon::prelude::*;
use voracious_radix_sort::RadixSort;
use warpath_benches::splitmix64;

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|s| s.replace('_', "").parse().ok())
        .unwrap_or(default)
}

fn random_u32(n: usize, seed: u64) -> Vec<u32> {
    let mut s = seed;
    (0..n).map(|_| splitmix64(&mut s) as u32).collect()
}

fn bench_sort_cpu(c: &mut Criterion) {
    let n = env_usize("WARPATH_SORT_N", 10_000_000);
    let data = random_u32(n, 1);
    let threads = rayon::current_num_threads();
    let mut g = c.benchmark_group(format!("sort_u32_{n}"));
    g.sample_size(10);
    g.throughput(Throughput::Elements(n as u64));
    let run = |g: &mut criterion::BenchmarkGroup<'_, _>, name: &str, f: &dyn Fn(&mut Vec<u32>)| {
        g.bench_function(name, |b| {
            b.iter_batched_ref(|| data.clone(), |v| f(v), BatchSize::LargeInput)
        });
    };
    run(&mut g, "slice_sort_unstable", &|v| v.sort_unstable());
    run(&mut g, "rayon_par_sort_unstable", &|v| {
        v.par_sort_unstable()
    });
    run(&mut g, "voracious_mt_sort", &|v| {
        v.voracious_mt_sort(threads)
    });
    run(&mut g, "gpu_primitives_radix_sort_cpu", &|v| {
        radix_sort(v, Exec::Cpu).unwrap();
    });
    if gpu_runtime::gpu().is_ok() {
        run(
            &mut g,
            "gpu_primitives_radix_sort_cuda_with_transfers",
            &|v| {
                radix_sort(v, Exec::Cuda).unwrap();
            },
        );
    }
    g.finish();
}

fn bench_scan_cpu(c: &mut Criterion) {
    let n = 1 << 24;
    let data = random_u32(n, 2);
    let mut g = c.benchmark_group("exclusive_scan_u32_to_u64");
    g.sample_size(10);
    g.throughput(Throughput::Bytes(12 * n as u64));
    g.bench_function("reference", |b| {
        b.iter(|| gpu_primitives::exclusive_scan_reference(&data))
    });
    g.bench_function("cpu", |b| {
        b.iter(|| exclusive_scan(&data, Exec::Cpu).unwrap())
    });
    g.finish();
}

/// "distinct of N ints in [0, 1000)": end to end (the GPU times include both transfers).
fn bench_distinct(c: &mut Criterion) {
    let (lo, hi) = std::env::var("WARPATH_DISTINCT_LOG2")
        .ok()
        .and_then(|s| {
            let (a, b) = s.split_once("..=")?;
            Some((a.parse().ok()?, b.parse().ok()?))
        })
        .unwrap_or((21u32, 24u32));
    let gpu = gpu_runtime::gpu().is_ok();
    let mut g = c.benchmark_group("distinct_ints_below_1000");
    g.sample_size(10);
    for log2 in lo..=hi {
        let n = 1usize << log2;
        let mut s = 3u64;
        let data: Vec<u32> = (0..n).map(|_| (splitmix64(&mut s) % 1000) as u32).collect();
        g.throughput(Throughput::Elements(n as u64));
        let opts = DistinctOptions::default();
        g.bench_with_input(BenchmarkId::new("cpu", log2), &data, |b, d| {
            b.iter(|| distinct_with(d, opts, Exec::Cpu).unwrap())
        });
        if gpu {
            g.bench_with_input(BenchmarkId::new("cuda_end_to_end", log2), &data, |b, d| {
                b.iter(|| distinct_with(d, opts, Exec::Cuda).unwrap())
            });
        }
    }
    g.finish();
}

/// Device-only GPU times (CUDA events around the queued work): sort and scan of 2^28 u32, and a
/// device-to-device copy of the same bytes as the scan's bandwidth yardstick.
/// Benchmark `name` in `g`: the device time of `f`, a CUDA event timer around each call.
fn device_time(g: &mut BenchmarkGroup<'_, WallTime>, gpu: &Gpu, name: &str, mut f: impl FnMut()) {
    g.bench_function(name, |b| {
        b.iter_custom(|iters| {
            (0..iters)
                .map(|_| {
                    let t = gpu.timer().unwrap();
                    f();
                    Duration::from_secs_f64(t.stop().unwrap())
                })
                .sum()
        })
    });
}

fn bench_gpu_device(c: &mut Criterion) {
    let Ok(gpu) = gpu_runtime::gpu() else {
        eprintln!("gpu-primitives bench: no CUDA device, GPU groups skipped");
        return;
    };
    let n = 1usize << env_usize("WARPATH_GPU_LOG2", 28);
    let data = random_u32(n, 4);
    let Ok(d) = gpu.upload(&data) else {
        eprintln!("gpu-primitives bench: {n} keys do not fit on the GPU");
        return;
    };
    let mut g = c.benchmark_group(format!("gpu_device_u32_{n}"));
    g.sample_size(10);
    g.throughput(Throughput::Elements(n as u64));
    device_time(&mut g, gpu, "radix_sort", || {
        let _ = gpu_primitives::device::radix_sort(gpu, &d).unwrap();
    });
    device_time(&mut g, gpu, "exclusive_scan_u32_to_u64", || {
        let _ = gpu_primitives::device::exclusive_scan(gpu, &d).unwrap();
    });
    // The scan reads 4 and writes 8 bytes per element (12n bytes moved); a copy of 6n bytes
    // (1.5n u32) also moves 12n bytes: the bandwidth yardstick for "scan >= 0.85x copy".
    let src = gpu.alloc_zeros::<u32>(3 * n / 2).unwrap();
    let mut dst = gpu.alloc_zeros::<u32>(3 * n / 2).unwrap();
    device_time(&mut g, gpu, "memcpy_dtod_same_bytes_moved", || {
        gpu.copy(&src, &mut dst).unwrap()
    });
    g.finish();
}

criterion_group!(
    benches,
    bench_sort_cpu,
    bench_scan_cpu,
    bench_distinct,
    bench_gpu_device
);
criterion_main!(benches);
