//! The GPU paths against the CPU paths: counting (gpu-primitives' device radix sort,
//! partitions grouped per sort) gives the same k-mers and counts; compaction (links by binary
//! search, list ranking by pointer jumping, cycles cut at their smallest k-mer) gives the same
//! `Compacted`, unitig for unitig. Runs under the simulated CUDA driver in CI; prints
//! `skipped: no CUDA device` without a GPU.

use assembly::{
    AssemblyError, Compacted, CountOptions, Exec, ReadSource, canonical, compact, compact_with,
    count_kmers, pack, random_genome, reads_to_fasta, reverse_complement_letters, simulate_reads,
    verify_unitigs,
};
use gpu_runtime::testing::{gpu_for_test, gpu_test_size, with_simulated_memory_limit};

mod common;
use common::cpu_options;

/// FASTA of 100-base reads at 8x with `errors` from a random genome (from `seed`, the reads
/// from `seed + 1`) of 200,000 bases on a GPU, `simulated_len` under the simulated driver
/// (it runs the kernels on the CPU).
fn simulated_fasta(simulated_len: usize, seed: u64, errors: f64) -> Vec<u8> {
    let genome = random_genome(gpu_test_size(200_000, simulated_len), seed);
    reads_to_fasta(&simulate_reads(&genome, 100, 8.0, errors, seed + 1))
}

#[test]
fn gpu_counts_equal_cpu_counts() {
    let Some(_gpu) = gpu_for_test("gpu_counts_equal_cpu_counts") else {
        return;
    };
    let fa = simulated_fasta(3_000, 5, 0.01);
    let src = [ReadSource::Bytes(&fa, "sim.fa")];
    for k in [15, 31] {
        let mut o = cpu_options(k, 1);
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

/// The solid k-mers (count >= `min_count`) of `reads`, counted on the CPU.
fn solid(reads: &[Vec<u8>], k: usize, min_count: u32) -> (Vec<u64>, Vec<u32>) {
    let fa = reads_to_fasta(reads);
    let o = cpu_options(k, min_count);
    let c = count_kmers::<u64>(&[ReadSource::Bytes(&fa, "r.fa")], &o, &mut |_| {}).unwrap();
    (c.kmers, c.counts)
}

/// Compacts on the GPU and checks it equals the CPU's `Compacted` and verifies.
fn gpu_equals_cpu(kmers: &[u64], counts: &[u32], k: usize, what: &str) -> Compacted {
    let cpu = compact(kmers, counts, k);
    let gpu = compact_with(kmers, counts, k, Exec::Cuda).unwrap();
    assert_eq!(gpu.unitigs.len(), cpu.unitigs.len(), "{what}: unitig count");
    for (u, (a, b)) in gpu.unitigs.iter().zip(&cpu.unitigs).enumerate() {
        assert_eq!(a, b, "{what}: unitig {u}");
    }
    assert_eq!(gpu, cpu, "{what}");
    verify_unitigs(&gpu, kmers, counts).unwrap();
    gpu
}

/// [`gpu_equals_cpu`] on the k-mers of `reads` seen at least `min_count` times.
fn reads_gpu_equals_cpu(reads: &[Vec<u8>], k: usize, min_count: u32, what: &str) -> Compacted {
    let (kmers, counts) = solid(reads, k, min_count);
    gpu_equals_cpu(&kmers, &counts, k, what)
}

#[test]
fn gpu_compaction_equals_cpu_on_noisy_reads() {
    let Some(_gpu) = gpu_for_test("gpu_compaction_equals_cpu_on_noisy_reads") else {
        return;
    };
    let len = gpu_test_size(300_000, 2_000);
    for (seed, k) in [(1u64, 3usize), (2, 5), (3, 9), (4, 15), (5, 21), (6, 31)] {
        let genome = random_genome(len, seed);
        let reads = simulate_reads(&genome, 100, 10.0, 0.01, seed + 100);
        // every k-mer (min count 1: many errors, many branches) and the solid ones
        for min_count in [1, 2] {
            reads_gpu_equals_cpu(&reads, k, min_count, &format!("k={k} min={min_count}"));
        }
    }
}

#[test]
fn gpu_compaction_of_circular_genomes_equals_cpu() {
    let Some(_gpu) = gpu_for_test("gpu_compaction_of_circular_genomes_equals_cpu") else {
        return;
    };
    for (seed, len, k) in [
        (7u64, 500usize, 21usize),
        (8, 64, 11),
        (9, 1_500, 31),
        (10, 40, 7),
    ] {
        // several circular genomes at once: each is one cycle (unless a k-mer repeats)
        let mut reads = Vec::new();
        for j in 0..3 {
            let g = random_genome(len + 17 * j, seed * 10 + j as u64);
            let mut circ = g.clone();
            circ.extend_from_slice(&g[..k - 1]);
            reads.push(circ.clone());
            reads.push(reverse_complement_letters(&circ));
        }
        // and a linear piece beside them
        reads.push(random_genome(300, seed + 50));
        let g = reads_gpu_equals_cpu(&reads, k, 1, &format!("circular k={k}"));
        if len > 200 {
            assert!(
                g.unitigs.iter().filter(|u| u.circular).count() >= 3,
                "k={k}"
            );
        }
    }
}

/// Palindromic neighbourhoods: k-mers whose successor is their own reverse complement's
/// neighbour (reads around reverse-complement palindromes of even length, where a k-mer's
/// neighbour can be itself read backwards), hairpins that fold a chain back on itself.
#[test]
fn gpu_compaction_around_palindromes_equals_cpu() {
    let Some(_gpu) = gpu_for_test("gpu_compaction_around_palindromes_equals_cpu") else {
        return;
    };
    for (seed, k) in [(11u64, 3usize), (12, 5), (13, 7), (14, 11), (15, 21)] {
        let mut reads = Vec::new();
        for j in 0..6 {
            // x + rc(x): an even palindrome, with flanks
            let x = random_genome(k + j, seed * 7 + j as u64);
            let mut r = random_genome(2 * k, seed * 11 + j as u64);
            r.extend_from_slice(&x);
            r.extend_from_slice(&reverse_complement_letters(&x));
            r.extend_from_slice(&random_genome(2 * k, seed * 13 + j as u64));
            reads.push(r);
            // x + y + rc(x): a hairpin with a loop
            let mut h = x.clone();
            h.extend_from_slice(&random_genome(3, seed * 17 + j as u64));
            h.extend_from_slice(&reverse_complement_letters(&x));
            reads.push(h);
        }
        reads_gpu_equals_cpu(&reads, k, 1, &format!("palindromes k={k}"));
    }
}

/// Every k-mer of small k: a dense graph (most k-mers branch), and the whole 3-mer space.
#[test]
fn gpu_compaction_of_dense_and_tiny_sets_equals_cpu() {
    let Some(_gpu) = gpu_for_test("gpu_compaction_of_dense_and_tiny_sets_equals_cpu") else {
        return;
    };
    for k in [3usize, 5, 7] {
        let mut all: Vec<u64> = (0..1u64 << (2 * k)).map(|x| canonical(x, k)).collect();
        all.sort();
        all.dedup();
        let counts = vec![3; all.len()];
        gpu_equals_cpu(&all, &counts, k, &format!("all {k}-mers"));
        // every third canonical k-mer: sparse, many short chains and isolated k-mers
        let some: Vec<u64> = all.iter().copied().step_by(3).collect();
        gpu_equals_cpu(
            &some,
            &vec![2; some.len()],
            k,
            &format!("a third of the {k}-mers"),
        );
        // one k-mer
        gpu_equals_cpu(&all[..1], &[5], k, &format!("one {k}-mer"));
    }
    // a single read: one unitig
    let read = b"ACCGTATGGCTTAGCATCGA";
    let mut kmers: Vec<u64> = (0..=read.len() - 7)
        .map(|i| canonical(pack(&read[i..], 7).unwrap(), 7))
        .collect();
    kmers.sort();
    kmers.dedup();
    let g = gpu_equals_cpu(&kmers, &vec![2; kmers.len()], 7, "one read");
    assert_eq!(g.unitigs.len(), 1);
}

#[test]
fn gpu_compaction_of_nothing_is_empty() {
    let Some(_gpu) = gpu_for_test("gpu_compaction_of_nothing_is_empty") else {
        return;
    };
    let g = compact_with::<u64>(&[], &[], 31, Exec::Cuda).unwrap();
    assert!(g.unitigs.is_empty());
    assert_eq!(g, compact::<u64>(&[], &[], 31));
}

#[test]
fn cuda_compaction_refuses_what_it_cannot_do() {
    let Some(_gpu) = gpu_for_test("cuda_compaction_refuses_what_it_cannot_do") else {
        return;
    };
    // 128-bit k-mers: the CPU only, said so
    let x: u128 = canonical(pack(&[b'A'; 33], 33).unwrap(), 33);
    let e = compact_with::<u128>(&[x], &[2], 33, Exec::Cuda).unwrap_err();
    assert!(matches!(e, AssemblyError::InvalidParameter(_)), "{e}");
    // under Auto they go to the CPU
    assert_eq!(
        compact_with::<u128>(&[x], &[2], 33, Exec::Auto).unwrap(),
        compact::<u128>(&[x], &[2], 33)
    );
    // too little device memory: a typed error before any work
    let genome = random_genome(400, 3);
    let (kmers, counts) = solid(&[genome.clone(), genome], 21, 1);
    if let Some(r) =
        with_simulated_memory_limit(1 << 10, || compact_with(&kmers, &counts, 21, Exec::Cuda))
    {
        let e = r.unwrap_err();
        assert!(
            matches!(
                e,
                AssemblyError::Gpu(gpu_runtime::GpuError::OutOfMemory { .. })
            ),
            "{e}"
        );
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(24))]
    /// Random genomes, random k, reads with errors: the GPU's unitigs are the CPU's, and they
    /// re-spell every solid k-mer exactly once.
    #[test]
    fn gpu_compaction_of_random_genomes_equals_cpu(
        seed in 0u64..1_000_000,
        len in 20usize..600,
        k_half in 1usize..16,
        error in 0.0f64..0.03,
    ) {
        let Some(_gpu) = gpu_for_test("gpu_compaction_of_random_genomes_equals_cpu") else {
            return Ok(());
        };
        let k = 2 * k_half + 1;
        let genome = random_genome(len.max(k + 1), seed);
        let reads = simulate_reads(&genome, (k + 10).min(genome.len()), 6.0, error, seed + 1);
        reads_gpu_equals_cpu(&reads, k, 1, &format!("seed {seed} len {len} k {k}"));
    }
}

/// Assembles `fa` (k, `partitions` buckets) through the bucketed pipeline on the CPU and on
/// the GPU and checks that both write the same FASTA and GFA, byte for byte, and that the GPU
/// did count and compact.
fn bucketed_gpu_writes_the_cpu_files(fa: &[u8], k: usize, partitions: usize) {
    let src = [ReadSource::Bytes(fa, "r.fa")];
    let files = |exec| {
        let mut o = CountOptions::new(k);
        o.exec = exec;
        o.partitions = partitions;
        let a = assembly::assemble::<u64>(&src, &o, true, &mut |_| {}).unwrap();
        assert_eq!(a.stats.check, Ok(()));
        let (mut fasta, mut gfa) = (Vec::new(), Vec::new());
        a.write_fasta(&mut fasta).unwrap();
        a.write_gfa(&mut gfa).unwrap();
        (
            a.stats.counting.backend,
            a.stats.compaction_backend,
            fasta,
            gfa,
        )
    };
    let cpu = files(Exec::Cpu);
    let gpu = files(Exec::Cuda);
    assert_eq!(
        (gpu.0, gpu.1),
        (assembly::Backend::Cuda, assembly::Backend::Cuda)
    );
    assert!(gpu.2 == cpu.2, "k={k}: FASTA differs");
    assert!(gpu.3 == cpu.3, "k={k}: GFA differs");
}

/// The bucketed pipeline on the GPU (counting by groups of buckets through the device's
/// distinct-with-counts, each bucket's end records sorted on the device) writes the CPU's
/// files, byte for byte.
#[test]
fn gpu_bucketed_assembly_writes_the_cpu_files() {
    let Some(_gpu) = gpu_for_test("gpu_bucketed_assembly_writes_the_cpu_files") else {
        return;
    };
    for (seed, k) in [(31u64, 15usize), (32, 31)] {
        bucketed_gpu_writes_the_cpu_files(&simulated_fasta(1_500, seed, 0.01), k, 4);
    }
}

/// Counting in several device launches (over two million k-mers: groups of at least 2^20,
/// the next group decoded while the device counts one) writes the CPU's files too.
#[test]
fn gpu_counting_in_several_groups_writes_the_cpu_files() {
    let Some(_gpu) = gpu_for_test("gpu_counting_in_several_groups_writes_the_cpu_files") else {
        return;
    };
    let genome = random_genome(400_000, 33);
    let fa = reads_to_fasta(&simulate_reads(&genome, 100, 8.0, 0.01, 34));
    bucketed_gpu_writes_the_cpu_files(&fa, 31, 16);
}

/// Eulertigs whose Euler circuit runs on the GPU: as many strings, as long, with the same
/// k-mers as the CPU's (the text may differ: the device merges cycles in its own order).
#[test]
fn gpu_eulertigs_equal_cpu_in_count_length_and_kmers() {
    let Some(_gpu) = gpu_for_test("gpu_eulertigs_equal_cpu_in_count_length_and_kmers") else {
        return;
    };
    let fa = simulated_fasta(1_500, 41, 0.02);
    let o = cpu_options(21, 1);
    let a = assembly::assemble::<u64>(&[ReadSource::Bytes(&fa, "r.fa")], &o, true, &mut |_| {})
        .unwrap();
    let (mut cpu, mut gpu) = (Vec::new(), Vec::new());
    let c = a.write_eulertigs(&mut cpu, Exec::Cpu).unwrap();
    let g = a.write_eulertigs(&mut gpu, Exec::Cuda).unwrap();
    assert_eq!(g.backend, assembly::Backend::Cuda);
    assert_eq!((g.strings, g.bases, g.kmers), (c.strings, c.bases, c.kmers));
    let kmers = |fa: &[u8]| {
        let mut v: Vec<u64> = Vec::new();
        for line in String::from_utf8_lossy(fa)
            .lines()
            .filter(|l| !l.starts_with('>'))
        {
            for i in 0..=line.len() - 21 {
                v.push(canonical(pack(&line.as_bytes()[i..], 21).unwrap(), 21));
            }
        }
        v.sort_unstable();
        v
    };
    let (kc, kg) = (kmers(&cpu), kmers(&gpu));
    assert!(kc.windows(2).all(|w| w[0] < w[1]), "each k-mer once");
    assert_eq!(kc, kg);
}
