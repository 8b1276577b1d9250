//! The GPU counting path (gpu-primitives' device radix sort, partitions grouped per sort)
//! against the CPU path: the same k-mers and counts. Runs under the simulated CUDA driver in
//! CI; prints `skipped: no CUDA device` without a GPU.

use assembly::{
    CountOptions, Exec, ReadSource, count_kmers, random_genome, reads_to_fasta, simulate_reads,
};
use gpu_runtime::testing::{gpu_for_test, simulated};

#[test]
fn gpu_counts_equal_cpu_counts() {
    let Some(_gpu) = gpu_for_test("gpu_counts_equal_cpu_counts") else {
        return;
    };
    // small under the simulated driver (it runs the kernels on the CPU), larger on hardware
    let len = if simulated() { 3_000 } else { 200_000 };
    let genome = random_genome(len, 5);
    let reads = simulate_reads(&genome, 100, 8.0, 0.01, 6);
    let fa = reads_to_fasta(&reads);
    let src = [ReadSource::Bytes(&fa, "sim.fa")];
    for k in [15, 31] {
        let mut o = CountOptions::new(k);
        o.min_count = 1;
        o.exec = Exec::Cpu;
        let cpu = count_kmers::<u64>(&src, &o, &mut |_| {}).unwrap();
        o.exec = Exec::Cuda;
        let gpu = count_kmers::<u64>(&src, &o, &mut |_| {}).unwrap();
        assert_eq!(gpu.stats.backend, assembly::Backend::Cuda);
        assert_eq!(gpu.kmers, cpu.kmers, "k={k}");
        assert_eq!(gpu.counts, cpu.counts, "k={k}");
        assert_eq!(gpu.stats.histogram, cpu.stats.histogram);
    }
    // 128-bit k-mers have no GPU sort: an error, not a silent CPU run
    let mut o = CountOptions::new(33);
    o.exec = Exec::Cuda;
    assert!(count_kmers::<u128>(&src, &o, &mut |_| {}).is_err());
}
