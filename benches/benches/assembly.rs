//! assembly: canonical k-mer counting (CPU radix sorts per minimizer partition, and the GPU's
//! distinct-with-counts) and compaction into maximal unitigs (the CPU walk over links computed
//! in parallel, and the GPU's list ranking by pointer jumping, transfers and the host's
//! numbering and spelling included) on reads simulated, seeded, from a random genome: 150 bp,
//! 0.5% substitutions, 30x, both strands, k = 31.
//!
//! Genome lengths come from `WARPATH_ASSEMBLY_BENCH_GENOME` (comma-separated, default
//! `1000000`); the E. coli-sized run is `WARPATH_ASSEMBLY_BENCH_GENOME=5000000`.

use assembly::{
    CountOptions, Exec, ReadSource, compact, compact_with, count_kmers, random_genome,
    reads_to_fasta, simulate_reads,
};
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};

const K: usize = 31;

fn sizes() -> Vec<usize> {
    std::env::var("WARPATH_ASSEMBLY_BENCH_GENOME")
        .ok()
        .map(|s| s.split(',').filter_map(|x| x.trim().parse().ok()).collect())
        .filter(|v: &Vec<usize>| !v.is_empty())
        .unwrap_or_else(|| vec![1_000_000])
}

fn reads(len: usize) -> Vec<u8> {
    let genome = random_genome(len, 1);
    reads_to_fasta(&simulate_reads(&genome, 150, 30.0, 0.005, 2))
}

fn bench_counting(c: &mut Criterion) {
    let gpu = gpu_runtime::gpu().is_ok();
    let mut g = c.benchmark_group("kmer_counting");
    g.sample_size(10);
    for len in sizes() {
        let fa = reads(len);
        let src = [ReadSource::Bytes(&fa, "reads.fa")];
        // throughput in bases read
        g.throughput(Throughput::Bytes(fa.len() as u64));
        let mut backends = vec![("cpu", Exec::Cpu)];
        if gpu {
            backends.push(("cuda", Exec::Cuda));
        }
        for (name, exec) in backends {
            let options = CountOptions {
                exec,
                ..CountOptions::new(K)
            };
            g.bench_with_input(BenchmarkId::new(name, len), &src, |b, s| {
                b.iter(|| count_kmers::<u64>(s, &options, &mut |_| {}).expect("counts"))
            });
        }
    }
    g.finish();
}

fn bench_compaction(c: &mut Criterion) {
    let gpu = gpu_runtime::gpu().is_ok();
    let mut g = c.benchmark_group("compaction");
    g.sample_size(10);
    for len in sizes() {
        let fa = reads(len);
        let counts = count_kmers::<u64>(
            &[ReadSource::Bytes(&fa, "reads.fa")],
            &CountOptions {
                exec: Exec::Cpu,
                ..CountOptions::new(K)
            },
            &mut |_| {},
        )
        .expect("counts");
        let input = (counts.kmers, counts.counts);
        g.throughput(Throughput::Elements(input.0.len() as u64));
        g.bench_with_input(BenchmarkId::new("cpu", len), &input, |b, (x, n)| {
            b.iter(|| compact(x, n, K))
        });
        if gpu {
            g.bench_with_input(BenchmarkId::new("cuda", len), &input, |b, (x, n)| {
                b.iter(|| compact_with(x, n, K, Exec::Cuda).expect("gpu"))
            });
        }
    }
    g.finish();
}

criterion_group!(benches, bench_counting, bench_compaction);
criterion_main!(benches);
