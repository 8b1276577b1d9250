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
use criterion::measurement::WallTime;
use criterion::{
    BenchmarkGroup, BenchmarkId, Criterion, Throughput, criterion_group, criterion_main,
};

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

/// The counting options of these benches: k = [`K`], run by `exec`.
fn count_options(exec: Exec) -> CountOptions {
    CountOptions {
        exec,
        ..CountOptions::new(K)
    }
}

/// Benchmark group `name`, sampled 10 times, over the genome lengths of [`sizes`]: `bench` gets
/// the group, the length, its simulated reads (FASTA) and whether a CUDA device is there.
fn over_genomes(
    c: &mut Criterion,
    name: &str,
    mut bench: impl FnMut(&mut BenchmarkGroup<'_, WallTime>, usize, &[u8], bool),
) {
    let gpu = gpu_runtime::gpu().is_ok();
    let mut g = c.benchmark_group(name);
    g.sample_size(10);
    for len in sizes() {
        bench(&mut g, len, &reads(len), gpu);
    }
    g.finish();
}

fn bench_counting(c: &mut Criterion) {
    over_genomes(c, "kmer_counting", |g, len, fa, gpu| {
        let src = [ReadSource::Bytes(fa, "reads.fa")];
        // throughput in bases read
        g.throughput(Throughput::Bytes(fa.len() as u64));
        let mut backends = vec![("cpu", Exec::Cpu)];
        if gpu {
            backends.push(("cuda", Exec::Cuda));
        }
        for (name, exec) in backends {
            let options = count_options(exec);
            g.bench_with_input(BenchmarkId::new(name, len), &src, |b, s| {
                b.iter(|| count_kmers::<u64>(s, &options, &mut |_| {}).expect("counts"))
            });
        }
    });
}

fn bench_compaction(c: &mut Criterion) {
    over_genomes(c, "compaction", |g, len, fa, gpu| {
        let src = [ReadSource::Bytes(fa, "reads.fa")];
        let counts = count_kmers::<u64>(&src, &count_options(Exec::Cpu), &mut |_| {});
        let counts = counts.expect("counts");
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
    });
}

criterion_group!(benches, bench_counting, bench_compaction);
criterion_main!(benches);
