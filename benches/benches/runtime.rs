//! gpu-runtime: axpy on the CPU (one thread vs rayon) and, with a GPU, the kernel alone timed
//! with CUDA events (the clock stops only after the device has finished) and the whole call
//! including both transfers.

use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use gpu_runtime::{Exec, axpy, axpy_device, axpy_reference};

fn bench_axpy(c: &mut Criterion) {
    let n = 1 << 22;
    let x = vec![1.5f32; n];
    let mut y = vec![0.5f32; n];
    let mut g = c.benchmark_group("axpy");
    // An axpy reads x and y and writes y: 12 bytes per element.
    g.throughput(Throughput::Bytes(12 * n as u64));
    g.bench_function("reference", |b| {
        b.iter(|| axpy_reference(1.0001, &x, &mut y))
    });
    g.bench_function("cpu", |b| {
        b.iter(|| axpy(1.0001, &x, &mut y, Exec::Cpu).unwrap())
    });
    if let Ok(gpu) = gpu_runtime::gpu() {
        g.bench_function("cuda_with_transfers", |b| {
            b.iter(|| axpy(1.0001, &x, &mut y, Exec::Cuda).unwrap())
        });
        let dx = gpu.upload(&x).unwrap();
        let mut dy = gpu.upload(&y).unwrap();
        g.bench_function("cuda_kernel", |b| {
            b.iter_custom(|iters| {
                let timer = gpu.timer().unwrap();
                for _ in 0..iters {
                    axpy_device(gpu, 1.0001, &dx, &mut dy).unwrap();
                }
                Duration::from_secs_f64(timer.stop().unwrap())
            })
        });
    }
    g.finish();
}

criterion_group!(benches, bench_axpy);
criterion_main!(benches);
