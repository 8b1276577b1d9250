//! Writes a seeded synthetic genome (random sequence with planted repeats of 1 to 10 kbp at
//! 0.5% to 2% divergence, see `assembly::synthetic_genome`) and, optionally, reads simulated
//! from it (150 bp, both strands, substitution errors), streamed to the file.
//!
//! `cargo run --release -p assembly --example synthetic_genome -- SIZE GENOME.fa [READS.fa
//! COVERAGE=20 ERROR_RATE=0.005 SEED=1]` (SIZE in bases: 60000000, 60M, 250M)

use std::io::Write;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let a: Vec<String> = std::env::args().skip(1).collect();
    if a.len() < 2 {
        return Err(
            "usage: synthetic_genome SIZE GENOME.fa [READS.fa COVERAGE ERROR_RATE SEED]".into(),
        );
    }
    let size = parse_size(&a[0])?;
    let coverage: f64 = a.get(3).map_or(Ok(20.0), |s| s.parse())?;
    let error: f64 = a.get(4).map_or(Ok(0.005), |s| s.parse())?;
    let seed: u64 = a.get(5).map_or(Ok(1), |s| s.parse())?;
    let genome = assembly::synthetic_genome(size, seed);
    let mut out = std::io::BufWriter::new(std::fs::File::create(&a[1])?);
    writeln!(out, ">synthetic size={size} seed={seed}")?;
    for line in genome.chunks(80) {
        out.write_all(line)?;
        out.write_all(b"\n")?;
    }
    out.flush()?;
    eprintln!("{size} bp synthetic genome (seed {seed}) -> {}", a[1]);
    if let Some(reads) = a.get(2) {
        let mut out = std::io::BufWriter::with_capacity(1 << 22, std::fs::File::create(reads)?);
        assembly::write_simulated_reads(&mut out, &genome, 150, coverage, error, seed + 1)?;
        out.flush()?;
        eprintln!(
            "150 bp reads, {coverage}x, {error} substitutions (seed {}) -> {reads}",
            seed + 1
        );
    }
    Ok(())
}

/// `60000000`, `60M`, `1.5G`.
fn parse_size(s: &str) -> Result<usize, Box<dyn std::error::Error>> {
    let (num, scale) = match s.chars().last() {
        Some('k' | 'K') => (&s[..s.len() - 1], 1e3),
        Some('m' | 'M') => (&s[..s.len() - 1], 1e6),
        Some('g' | 'G') => (&s[..s.len() - 1], 1e9),
        _ => (s, 1.0),
    };
    Ok((num.parse::<f64>()? * scale) as usize)
}
