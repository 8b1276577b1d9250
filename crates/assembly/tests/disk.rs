//! The bucketed pipeline (`assemble`) against the in-memory one (`count_kmers` + `compact`):
//! the same files, byte for byte, whatever the buckets, threads and memory bound.

use assembly::{
    CountOptions, CountWord, ReadSource, assemble, compact, count_kmers, random_genome,
    reads_to_fasta, simulate_reads, write_dot, write_gfa, write_unitigs_fasta,
};

/// FASTA, GFA and DOT of the in-memory pipeline.
fn in_memory<W: CountWord>(fa: &[u8], k: usize, min_count: u32) -> [Vec<u8>; 3] {
    let mut o = CountOptions::new(k);
    o.min_count = min_count;
    o.exec = assembly::Exec::Cpu;
    let c = count_kmers::<W>(&[ReadSource::Bytes(fa, "r.fa")], &o, &mut |_| {}).unwrap();
    let g = compact(&c.kmers, &c.counts, k);
    let links = g.all_links(&c.kmers);
    let (mut a, mut b, mut d) = (Vec::new(), Vec::new(), Vec::new());
    write_unitigs_fasta::<W>(&mut a, &g, &links).unwrap();
    write_gfa(&mut b, &g, &links).unwrap();
    write_dot(&mut d, &g, &links).unwrap();
    [a, b, d]
}

fn bucketed<W: CountWord>(fa: &[u8], o: &CountOptions) -> [Vec<u8>; 3] {
    let a = assemble::<W>(&[ReadSource::Bytes(fa, "r.fa")], o, true, &mut |_| {}).unwrap();
    assert_eq!(a.stats.check, Ok(()));
    let (mut x, mut y, mut z) = (Vec::new(), Vec::new(), Vec::new());
    a.write_fasta(&mut x).unwrap();
    a.write_gfa(&mut y).unwrap();
    a.write_dot(&mut z).unwrap();
    [x, y, z]
}

fn check<W: CountWord>(fa: &[u8], k: usize, min_count: u32, what: &str) {
    let want = in_memory::<W>(fa, k, min_count);
    for partitions in [1, 3, 64, 1024] {
        for threads in [1, 2] {
            let mut o = CountOptions::new(k);
            o.min_count = min_count;
            o.partitions = partitions;
            o.threads = threads;
            o.exec = assembly::Exec::Cpu;
            let got = bucketed::<W>(fa, &o);
            for (i, name) in ["fasta", "gfa", "dot"].iter().enumerate() {
                if got[i] != want[i] {
                    let g = String::from_utf8_lossy(&got[i]);
                    let w = String::from_utf8_lossy(&want[i]);
                    let line = g.lines().zip(w.lines()).position(|(a, b)| a != b);
                    panic!(
                        "{what}: k={k} partitions={partitions} threads={threads}: {name} differs at line {line:?}:\n got {:?}\nwant {:?}",
                        line.and_then(|l| g.lines().nth(l)),
                        line.and_then(|l| w.lines().nth(l))
                    );
                }
            }
        }
    }
}

#[test]
fn bucketed_equals_in_memory_on_noisy_reads() {
    for (seed, len, k) in [
        (1u64, 3_000usize, 21usize),
        (2, 5_000, 31),
        (3, 2_000, 11),
        (4, 800, 5),
    ] {
        let g = random_genome(len, seed);
        let reads = simulate_reads(&g, 100.min(len), 12.0, 0.01, seed + 10);
        let fa = reads_to_fasta(&reads);
        check::<u64>(&fa, k, 2, "noisy");
    }
}

#[test]
fn bucketed_equals_in_memory_for_long_kmers() {
    let g = random_genome(3_000, 7);
    let reads = simulate_reads(&g, 120, 10.0, 0.01, 8);
    let fa = reads_to_fasta(&reads);
    check::<u128>(&fa, 33, 2, "k=33");
    check::<u128>(&fa, 63, 2, "k=63");
}

#[test]
fn bucketed_cycles_and_repeats() {
    // a circular genome: one circular unitig
    let g = random_genome(500, 9);
    let mut circ = g.clone();
    circ.extend_from_slice(&g[..40]);
    let fa = reads_to_fasta(&[circ.clone(), circ]);
    check::<u64>(&fa, 21, 2, "circle");
    // repeats: a genome with copies of one segment
    let a = random_genome(300, 11);
    let r = random_genome(80, 12);
    let mut genome = Vec::new();
    for i in 0..4 {
        genome.extend_from_slice(&a[i * 70..i * 70 + 70]);
        genome.extend_from_slice(&r);
    }
    let fa = reads_to_fasta(&[genome.clone(), genome]);
    check::<u64>(&fa, 15, 2, "repeats");
    // homopolymers and palindromes: self-loops and hairpins
    let fa = b">a\nAAAAAAAAAAAAAAAAAAAAACGTACGTACGTACGTTTTTTTTTTTTTTT\n>b\nAAAAAAAAAAAAAAAAAAAAACGTACGTACGTACGTTTTTTTTTTTTTTT\n";
    check::<u64>(fa, 5, 2, "homopolymer");
    check::<u64>(fa, 7, 1, "homopolymer");
}
