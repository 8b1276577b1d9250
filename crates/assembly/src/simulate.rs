//! Seeded test data: random genomes and reads sampled from both strands with substitution
//! errors (the benchmark's "30x, 150 bp, 0.5% substitutions" set, at any size).

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

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
    if genome.len() < read_len || read_len == 0 {
        return Vec::new();
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let n = (coverage * genome.len() as f64 / read_len as f64).round() as usize;
    (0..n)
        .map(|_| {
            let s = rng.random_range(0..=genome.len() - read_len);
            let mut r: Vec<u8> = genome[s..s + read_len].to_vec();
            if rng.random_bool(0.5) {
                r = crate::kmer::reverse_complement_letters(&r);
            }
            for b in r.iter_mut() {
                if rng.random::<f64>() < error_rate {
                    let others: Vec<u8> = b"ACGT".iter().copied().filter(|c| c != b).collect();
                    *b = others[rng.random_range(0..3)];
                }
            }
            r
        })
        .collect()
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
