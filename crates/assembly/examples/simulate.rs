//! Simulates reads from a genome FASTA (the benchmark's data set): seeded, both strands,
//! substitution errors.
//!
//! `cargo run --release -p assembly --example simulate -- GENOME.fa[.gz] OUT.fa [COVERAGE=30]
//! [READ_LEN=150] [ERROR_RATE=0.005] [SEED=1]`

use std::io::Write;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let a: Vec<String> = std::env::args().skip(1).collect();
    if a.len() < 2 {
        return Err(
            "usage: simulate GENOME.fa OUT.fa [COVERAGE] [READ_LEN] [ERROR_RATE] [SEED]".into(),
        );
    }
    let coverage: f64 = a.get(2).map_or(Ok(30.0), |s| s.parse())?;
    let read_len: usize = a.get(3).map_or(Ok(150), |s| s.parse())?;
    let error: f64 = a.get(4).map_or(Ok(0.005), |s| s.parse())?;
    let seed: u64 = a.get(5).map_or(Ok(1), |s| s.parse())?;
    let mut reader = needletail::parse_fastx_file(&a[0])?;
    let mut genome = Vec::new();
    while let Some(r) = reader.next() {
        // contigs of the genome, joined: a read across a junction is rare and harmless here
        genome.extend(
            r?.seq()
                .iter()
                .map(u8::to_ascii_uppercase)
                .filter(|b| b"ACGT".contains(b)),
        );
    }
    let reads = assembly::simulate_reads(&genome, read_len, coverage, error, seed);
    let mut out = std::io::BufWriter::new(std::fs::File::create(&a[1])?);
    out.write_all(&assembly::reads_to_fasta(&reads))?;
    eprintln!(
        "{} reads of {read_len} bp ({coverage}x of {} bp, {error} substitutions, seed {seed}) -> {}",
        reads.len(),
        genome.len(),
        a[1]
    );
    Ok(())
}
