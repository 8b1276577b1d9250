//! graph-core: Euler circuits (Hierholzer on one core, the parallel algorithm on rayon, the
//! CUDA pipeline with device time measured by events, transfers excluded) on deep and shallow
//! random Eulerian digraphs; undirected Euler circuits (the reference Hierholzer walk, the
//! balanced orientation + the directed circuit on the CPU, and on the GPU with transfers) on
//! the same graphs without directions; and CSR construction.
//!
//! Edge counts come from `WARPATH_GRAPH_BENCH_EDGES` (comma-separated, default
//! `1000000,10000000`); the seed's chart (1M to 100M edges) is
//! `WARPATH_GRAPH_BENCH_EDGES=1000000,3000000,10000000,30000000,100000000`.

use std::time::Duration;

use criterion::measurement::WallTime;
use criterion::{
    BenchmarkGroup, BenchmarkId, Criterion, Throughput, criterion_group, criterion_main,
};
use graph_core::{
    EulerStyle, Exec, Graph, euler_circuit_cuda_timed, euler_circuit_hierholzer,
    euler_circuit_parallel, random_euler_graph, random_undirected_euler_graph,
    undirected_euler_circuit, undirected_euler_circuit_hierholzer,
    undirected_euler_circuit_oriented,
};

fn sizes() -> Vec<u64> {
    std::env::var("WARPATH_GRAPH_BENCH_EDGES")
        .ok()
        .map(|s| s.split(',').filter_map(|x| x.trim().parse().ok()).collect())
        .filter(|v: &Vec<u64>| !v.is_empty())
        .unwrap_or_else(|| vec![1_000_000, 10_000_000])
}

/// One benchmark group per Euler style, named `deep` or `shallow` for the style, sampled 10
/// times over [`sizes`]: `generate(m, style)` builds the graph of `m` edges, throughput `m`, and
/// `bench` adds the group's benchmarks on it (`gpu`: whether a CUDA device is there).
fn euler_groups<G>(
    c: &mut Criterion,
    [deep, shallow]: [&str; 2],
    generate: impl Fn(u64, EulerStyle) -> G,
    bench: impl Fn(&mut BenchmarkGroup<'_, WallTime>, u64, &G, bool),
) {
    let gpu = gpu_runtime::gpu().is_ok();
    for style in [EulerStyle::Deep, EulerStyle::Shallow] {
        let name = match style {
            EulerStyle::Deep => deep,
            EulerStyle::Shallow => shallow,
        };
        let mut g = c.benchmark_group(name);
        g.sample_size(10);
        for m in sizes() {
            let graph = generate(m, style);
            g.throughput(Throughput::Elements(m));
            bench(&mut g, m, &graph, gpu);
        }
        g.finish();
    }
}

fn bench_euler(c: &mut Criterion) {
    let generate = |m, style| random_euler_graph(m, style, 1).expect("generator");
    euler_groups(
        c,
        ["euler_deep", "euler_shallow"],
        generate,
        |g, m, graph, gpu| {
            g.bench_with_input(BenchmarkId::new("hierholzer", m), graph, |b, gr| {
                b.iter(|| euler_circuit_hierholzer(gr).expect("circuit"))
            });
            g.bench_with_input(BenchmarkId::new("parallel", m), graph, |b, gr| {
                b.iter(|| euler_circuit_parallel(gr).expect("circuit"))
            });
            if gpu {
                // Device time of the algorithm alone (CUDA events; the timer waits for the
                // device before it stops), transfers excluded.
                g.bench_with_input(BenchmarkId::new("cuda_compute", m), graph, |b, gr| {
                    b.iter_custom(|iters| {
                        let mut total = 0.0;
                        for _ in 0..iters {
                            total += euler_circuit_cuda_timed(gr).expect("gpu").1.compute;
                        }
                        Duration::from_secs_f64(total)
                    })
                });
                g.bench_with_input(BenchmarkId::new("cuda_transfers", m), graph, |b, gr| {
                    b.iter_custom(|iters| {
                        let mut total = 0.0;
                        for _ in 0..iters {
                            let t = euler_circuit_cuda_timed(gr).expect("gpu").1;
                            total += t.upload + t.download;
                        }
                        Duration::from_secs_f64(total)
                    })
                });
            }
        },
    );
}

fn bench_undirected_euler(c: &mut Criterion) {
    let generate = |m, style| random_undirected_euler_graph(m, style, 1).expect("generator");
    let names = ["undirected_euler_deep", "undirected_euler_shallow"];
    euler_groups(c, names, generate, |g, m, graph, gpu| {
        g.bench_with_input(BenchmarkId::new("hierholzer", m), graph, |b, gr| {
            b.iter(|| undirected_euler_circuit_hierholzer(gr, None).expect("circuit"))
        });
        g.bench_with_input(BenchmarkId::new("oriented", m), graph, |b, gr| {
            b.iter(|| undirected_euler_circuit_oriented(gr, None).expect("circuit"))
        });
        if gpu {
            // Wall clock of the whole call: uploads, kernels, the download of the order
            // and the vertex sequence built on the host.
            g.bench_with_input(BenchmarkId::new("cuda", m), graph, |b, gr| {
                b.iter(|| undirected_euler_circuit(gr, None, Exec::Cuda).expect("gpu"))
            });
        }
    });
}

fn bench_csr(c: &mut Criterion) {
    let m = 10_000_000usize;
    let n = (m / 4) as u32;
    let mut state = 7u64;
    let s: Vec<u32> = (0..m)
        .map(|_| (warpath_benches::splitmix64(&mut state) % n as u64) as u32)
        .collect();
    let t: Vec<u32> = (0..m)
        .map(|_| (warpath_benches::splitmix64(&mut state) % n as u64) as u32)
        .collect();
    let mut g = c.benchmark_group("csr");
    g.sample_size(10);
    g.throughput(Throughput::Elements(m as u64));
    g.bench_function("from_sources_targets_10M", |b| {
        b.iter(|| Graph::from_sources_targets(n as usize, &s, &t).expect("csr"))
    });
    let graph = Graph::from_sources_targets(n as usize, &s, &t).expect("csr");
    g.bench_function("reverse_10M", |b| b.iter(|| graph.reverse()));
    g.finish();
}

criterion_group!(benches, bench_euler, bench_undirected_euler, bench_csr);
criterion_main!(benches);
