//! The bucketed pipeline (`assemble`) against the in-memory one (`count_kmers` + `compact`):
//! the same files, byte for byte, whatever the buckets, threads and memory bound.

use assembly::{
    CountOptions, CountWord, ReadSource, assemble, compact, count_kmers, random_genome,
    reads_to_fasta, simulate_reads, write_dot, write_gfa, write_unitigs_fasta,
};

mod common;
use common::{cpu_options, temp_dir};

/// FASTA, GFA and DOT of the in-memory pipeline.
fn in_memory<W: CountWord>(fa: &[u8], k: usize, min_count: u32) -> [Vec<u8>; 3] {
    let o = cpu_options(k, min_count);
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
            let mut o = cpu_options(k, min_count);
            o.partitions = partitions;
            o.threads = threads;
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

/// A genome with planted diverged repeats and 20x reads of it with 1% errors (about 4 MB of
/// FASTA): large enough that the memory bound changes the number of buckets.
fn repeat_genome_reads(seed: u64) -> Vec<u8> {
    let mut g = random_genome(200_000, seed);
    let unit = random_genome(1_500, seed + 1);
    for (i, at) in [10_000usize, 60_000, 110_000, 150_000]
        .into_iter()
        .enumerate()
    {
        let mut copy = unit.clone();
        // about 1% divergence between the copies
        for j in (i * 7..copy.len()).step_by(97) {
            copy[j] = if copy[j] == b'A' { b'C' } else { b'A' };
        }
        g[at..at + copy.len()].copy_from_slice(&copy);
    }
    reads_to_fasta(&simulate_reads(&g, 150, 20.0, 0.01, seed + 2))
}

/// Nothing left in a folder (the runs removed their temporary files).
fn assert_empty(d: &std::path::Path) {
    let left: Vec<_> = std::fs::read_dir(d)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert!(left.is_empty(), "left behind: {left:?}");
}

#[test]
fn files_are_identical_for_any_threads_and_memory_bound() {
    let fa = repeat_genome_reads(21);
    let reads = temp_dir("asm-disk-reads");
    let path = reads.join("r.fa");
    std::fs::write(&path, &fa).unwrap();
    let tmp = temp_dir("asm-disk-identical");
    let mut seen: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
    let mut buckets = Vec::new();
    for max_memory in [48_000_000u64, 4_000_000_000] {
        for threads in [1, 2] {
            let mut o = CountOptions::new(31);
            o.max_memory = max_memory;
            o.threads = threads;
            o.temp_dir = Some(tmp.clone());
            o.exec = assembly::Exec::Cpu;
            let a = assemble::<u64>(&[ReadSource::File(&path)], &o, true, &mut |_| {}).unwrap();
            assert_eq!(a.stats.check, Ok(()));
            assert!(a.stats.temp_bytes > 0, "the buckets went to disk");
            buckets.push(a.buckets());
            // written as the command line writes them: partial files renamed when complete
            let fasta = tmp.join("u.fa");
            let gfa = tmp.join("g.gfa");
            let mut f = assembly::PartialFile::create(&fasta).unwrap();
            a.write_fasta(&mut f).unwrap();
            f.commit().unwrap();
            let mut f = assembly::PartialFile::create(&gfa).unwrap();
            a.write_gfa(&mut f).unwrap();
            f.commit().unwrap();
            drop(a);
            seen.push((std::fs::read(&fasta).unwrap(), std::fs::read(&gfa).unwrap()));
            std::fs::remove_file(&fasta).unwrap();
            std::fs::remove_file(&gfa).unwrap();
            assert_empty(&tmp);
        }
    }
    // the bound and the threads changed how the k-mers were bucketed ...
    assert!(
        buckets.iter().any(|&b| b != buckets[0]),
        "buckets {buckets:?}"
    );
    // ... and nothing in the files
    for (i, s) in seen.iter().enumerate() {
        assert!(s.0 == seen[0].0, "FASTA of run {i} differs from run 0");
        assert!(s.1 == seen[0].1, "GFA of run {i} differs from run 0");
    }
    // and they are the in-memory pipeline's
    let want = in_memory::<u64>(&fa, 31, 2);
    assert!(seen[0].0 == want[0] && seen[0].1 == want[1]);
    std::fs::remove_dir_all(&reads).unwrap();
    std::fs::remove_dir_all(&tmp).unwrap();
}

#[test]
fn a_bucket_too_large_is_counted_in_passes_and_compacted_alone() {
    // one bucket for everything, under a small bound: counting takes several passes (each a
    // hash class of the k-mers) and compaction runs that bucket on its own
    let fa = repeat_genome_reads(5);
    let tmp = temp_dir("asm-disk-passes");
    let mut o = CountOptions::new(31);
    o.partitions = 1;
    o.max_memory = 48_000_000;
    o.threads = 2;
    o.temp_dir = Some(tmp.clone());
    o.exec = assembly::Exec::Cpu;
    let got = bucketed::<u64>(&fa, &o);
    let want = in_memory::<u64>(&fa, 31, 2);
    assert!(got == want, "the files differ");
    // with every k-mer kept (min count 1) that one bucket no longer fits the whole bound: a
    // clear error, not an overshoot
    o.min_count = 1;
    let e = assemble::<u64>(&[ReadSource::Bytes(&fa, "r.fa")], &o, true, &mut |_| {})
        .err()
        .expect("too large for the bound");
    assert!(matches!(e, assembly::AssemblyError::Memory(_)), "{e}");
    assert!(e.to_string().contains("raise --max-memory"), "{e}");
    assert_empty(&tmp);
    std::fs::remove_dir_all(&tmp).unwrap();
}

#[test]
fn a_bound_too_small_is_refused() {
    let mut o = CountOptions::new(31);
    o.max_memory = 10_000_000;
    let e = assemble::<u64>(
        &[ReadSource::Bytes(b">a\nACGT\n", "r.fa")],
        &o,
        true,
        &mut |_| {},
    )
    .err()
    .unwrap();
    assert!(matches!(e, assembly::AssemblyError::Memory(_)));
    assert!(e.to_string().contains("too small"), "{e}");
}

#[test]
fn a_cancelled_run_stops_and_cleans_up() {
    let fa = repeat_genome_reads(8);
    let tmp = temp_dir("asm-disk-cancel");
    let cancel = std::sync::Arc::new(assembly::Cancel::new());
    let mut o = CountOptions::new(31);
    o.temp_dir = Some(tmp.clone());
    o.max_memory = 100_000_000;
    o.cancel = Some(cancel.clone());
    // cancel as soon as the first stage reports progress
    let e = assemble::<u64>(&[ReadSource::Bytes(&fa, "r.fa")], &o, true, &mut |_| {
        cancel.cancel()
    })
    .err()
    .expect("cancelled");
    assert!(matches!(e, assembly::AssemblyError::Interrupted), "{e}");
    assert_empty(&tmp);
    std::fs::remove_dir_all(&tmp).unwrap();
}

/// Mounts a tmpfs of `bytes` on a new folder; `None` where this process may not mount (not
/// root, or in a container without the capability).
fn small_disk(name: &str, bytes: u64) -> Option<std::path::PathBuf> {
    let d = temp_dir(&format!("asm-disk-{name}"));
    let ok = std::process::Command::new("mount")
        .args(["-t", "tmpfs", "-o", &format!("size={bytes}"), "tmpfs"])
        .arg(&d)
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if ok {
        Some(d)
    } else {
        let _ = std::fs::remove_dir_all(&d);
        None
    }
}

fn unmount(d: &std::path::Path) {
    let _ = std::process::Command::new("umount").arg(d).status();
    let _ = std::fs::remove_dir_all(d);
}

#[test]
fn a_full_disk_is_a_clean_error() {
    let fa = repeat_genome_reads(13);
    // room for the free-space check, not for the run's temporary files
    let Some(d) = small_disk("full", fa.len() as u64 * 3 / 4) else {
        eprintln!(
            "skipped: cannot mount a tmpfs here (needs root); spill.rs tests the error on /dev/full"
        );
        return;
    };
    let mut o = CountOptions::new(31);
    o.temp_dir = Some(d.clone());
    o.max_memory = 100_000_000;
    let r = assemble::<u64>(&[ReadSource::Bytes(&fa, "r.fa")], &o, true, &mut |_| {});
    let e = r.err().expect("the disk fills up");
    let text = e.to_string();
    let left: Vec<_> = std::fs::read_dir(&d)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    unmount(&d);
    assert!(
        matches!(&e, assembly::AssemblyError::Disk { error, .. } if error.raw_os_error() == Some(28)),
        "{e:?}"
    );
    assert!(text.contains("the disk is full"), "{text}");
    assert!(left.is_empty(), "left behind: {left:?}");
    // and a disk too small from the start is refused before any work
    let Some(d) = small_disk("tiny", 64 * 1024) else {
        return;
    };
    o.temp_dir = Some(d.clone());
    let e = assemble::<u64>(&[ReadSource::Bytes(&fa, "r.fa")], &o, true, &mut |_| {})
        .err()
        .expect("refused");
    unmount(&d);
    assert!(
        matches!(e, assembly::AssemblyError::DiskSpace { .. }),
        "{e:?}"
    );
    assert!(e.to_string().contains("--temp-dir"), "{e}");
}

mod prop {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]
        #[test]
        fn bucketed_files_equal_in_memory_files(
            seed in 0u64..10_000,
            len in 60usize..1_500,
            k in proptest::sample::select(vec![5usize, 7, 9, 15, 21, 31]),
            partitions in proptest::sample::select(vec![1usize, 2, 5, 16, 200]),
            errors in proptest::sample::select(vec![0.0f64, 0.02, 0.08]),
            min_count in 1u32..3,
        ) {
            let g = random_genome(len, seed);
            let reads = simulate_reads(&g, 50.min(len), 8.0, errors, seed + 1);
            let fa = reads_to_fasta(&reads);
            let want = in_memory::<u64>(&fa, k, min_count);
            let mut o = cpu_options(k, min_count);
            o.partitions = partitions;
            o.threads = 2;
            let got = bucketed::<u64>(&fa, &o);
            prop_assert!(got == want, "seed {seed} len {len} k {k} partitions {partitions}");
        }
    }
}
