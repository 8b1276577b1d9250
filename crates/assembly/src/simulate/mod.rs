//! Seeded test data: random genomes and reads sampled from both strands with substitution
//! errors (the benchmark's "30x, 150 bp, 0.5% substitutions" set, at any size), and
//! pangenomes (`pangenome.rs`: descendants of a base genome along a random tree).

use std::io::Write;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

mod pangenome;

pub use pangenome::{
    GENE_MAX, GENE_MIN, GenomeFn, INDEL_MAX, Pangenome, PangenomeEvents, PangenomeOptions,
    simulate_pangenome, write_pangenome,
};

/// A random genome of `len` bases (`ACGT`), seeded.
///
/// # Examples
/// ```
/// let g = assembly::random_genome(100, 1);
/// assert_eq!(g.len(), 100);
/// assert_eq!(g, assembly::random_genome(100, 1));
/// ```
pub fn random_genome(len: usize, seed: u64) -> Vec<u8> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..len).map(|_| b"ACGT"[rng.random_range(0..4)]).collect()
}

/// Reads of `read_len` bases sampled uniformly from `genome` to `coverage` (reads x length /
/// genome length), each from either strand with probability 1/2, each base replaced by
/// another with probability `error_rate`. Seeded.
///
/// # Examples
/// ```
/// let g = assembly::random_genome(1000, 1);
/// let reads = assembly::simulate_reads(&g, 100, 10.0, 0.0, 2);
/// assert_eq!(reads.len(), 100);
/// ```
pub fn simulate_reads(
    genome: &[u8],
    read_len: usize,
    coverage: f64,
    error_rate: f64,
    seed: u64,
) -> Vec<Vec<u8>> {
    let mut reads = Vec::new();
    each_read(genome, read_len, coverage, error_rate, seed, &mut |r| {
        reads.push(r.to_vec());
        Ok(())
    })
    .expect("collecting cannot fail");
    reads
}

/// Writes the reads of [`simulate_reads`] as FASTA to `out` as they are drawn, without
/// holding them: the same bytes as `reads_to_fasta(&simulate_reads(..))`, in memory of one
/// read.
///
/// # Errors
/// The writer's.
///
/// # Examples
/// ```
/// let g = assembly::random_genome(1000, 1);
/// let mut fa = Vec::new();
/// assembly::write_simulated_reads(&mut fa, &g, 100, 5.0, 0.01, 3)?;
/// assert_eq!(fa, assembly::reads_to_fasta(&assembly::simulate_reads(&g, 100, 5.0, 0.01, 3)));
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn write_simulated_reads(
    out: &mut dyn Write,
    genome: &[u8],
    read_len: usize,
    coverage: f64,
    error_rate: f64,
    seed: u64,
) -> std::io::Result<()> {
    let mut i = 0u64;
    each_read(genome, read_len, coverage, error_rate, seed, &mut |r| {
        writeln!(out, ">r{i}")?;
        out.write_all(r)?;
        out.write_all(b"\n")?;
        i += 1;
        Ok(())
    })
}

/// Draws the reads of [`simulate_reads`] one at a time.
fn each_read(
    genome: &[u8],
    read_len: usize,
    coverage: f64,
    error_rate: f64,
    seed: u64,
    f: &mut dyn FnMut(&[u8]) -> std::io::Result<()>,
) -> std::io::Result<()> {
    if genome.len() < read_len || read_len == 0 {
        return Ok(());
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let n = (coverage * genome.len() as f64 / read_len as f64).round() as usize;
    let mut r: Vec<u8> = Vec::with_capacity(read_len);
    for _ in 0..n {
        let s = rng.random_range(0..=genome.len() - read_len);
        r.clear();
        r.extend_from_slice(&genome[s..s + read_len]);
        if rng.random_bool(0.5) {
            r = crate::kmer::reverse_complement_letters(&r);
        }
        for b in r.iter_mut() {
            if rng.random::<f64>() < error_rate {
                let others: Vec<u8> = b"ACGT".iter().copied().filter(|c| c != b).collect();
                *b = others[rng.random_range(0..3)];
            }
        }
        f(&r)?;
    }
    Ok(())
}

/// A seeded synthetic genome of `len` bases that looks like a eukaryote's to an assembler:
/// random sequence with planted repeats, one copy per 30 kbp on average, from families of
/// one unit each (1 to 10 kbp, eight copies per family on average); every copy differs from
/// its unit at 0.5% to 2% of its bases (substitutions) and lies on either strand.
///
/// # Examples
/// ```
/// let g = assembly::synthetic_genome(100_000, 7);
/// assert_eq!(g.len(), 100_000);
/// assert_eq!(g, assembly::synthetic_genome(100_000, 7));
/// assert!(g.iter().all(|b| b"ACGT".contains(b)));
/// ```
pub fn synthetic_genome(len: usize, seed: u64) -> Vec<u8> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut g: Vec<u8> = (0..len).map(|_| b"ACGT"[rng.random_range(0..4)]).collect();
    let copies = len / 30_000;
    let families = (copies / 8).max(1);
    let units: Vec<Vec<u8>> = (0..families)
        .map(|_| {
            let l = rng.random_range(1_000..=10_000usize);
            (0..l).map(|_| b"ACGT"[rng.random_range(0..4)]).collect()
        })
        .collect();
    for _ in 0..copies {
        let unit = &units[rng.random_range(0..families)];
        if unit.len() >= len {
            continue;
        }
        let divergence = rng.random_range(0.005..=0.02);
        let mut copy = unit.clone();
        for b in copy.iter_mut() {
            if rng.random::<f64>() < divergence {
                let others: Vec<u8> = b"ACGT".iter().copied().filter(|c| c != b).collect();
                *b = others[rng.random_range(0..3)];
            }
        }
        if rng.random_bool(0.5) {
            copy = crate::kmer::reverse_complement_letters(&copy);
        }
        let at = rng.random_range(0..=len - copy.len());
        g[at..at + copy.len()].copy_from_slice(&copy);
    }
    g
}

/// Writes reads as FASTA (`>r<i>` headers, one line of sequence each).
pub fn reads_to_fasta(reads: &[Vec<u8>]) -> Vec<u8> {
    let mut out = Vec::with_capacity(reads.iter().map(|r| r.len() + 12).sum());
    for (i, r) in reads.iter().enumerate() {
        out.extend_from_slice(format!(">r{i}\n").as_bytes());
        out.extend_from_slice(r);
        out.push(b'\n');
    }
    out
}
