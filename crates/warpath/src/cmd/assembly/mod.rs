//! `warpath kmers` and `warpath assemble` (the assembly crate): one file per subcommand; here
//! what both share (the reads and counting arguments, counting with progress, peak memory)
//! and the rows of `warpath demo`.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::Result;
use assembly::{
    CountOptions, CountWord, Exec, KmerCounts, ReadSource, compact, compact_with, count_kmers,
    random_genome, reads_to_fasta, simulate_reads, verify_unitigs,
};
use gpu_runtime::Backend;

use crate::report::{DemoRow, DemoSize, Rows};

mod assemble;
mod kmers;

pub(crate) use assemble::{AssembleArgs, run_assemble};
pub(crate) use kmers::{KmersArgs, run_kmers};

/// The reads and counting options both subcommands take.
#[derive(clap::Args)]
pub(crate) struct CountArgs {
    /// FASTA or FASTQ files, plain or gzip, read one after the other.
    #[arg(required = true, value_name = "READS")]
    reads: Vec<PathBuf>,
    /// k-mer length: odd, from 3 to 63.
    #[arg(long)]
    k: usize,
    /// Drop k-mers seen fewer times (sequencing errors are mostly seen once).
    #[arg(long, default_value_t = 2)]
    min_count: u32,
    /// Drop k-mers seen more times.
    #[arg(long)]
    max_count: Option<u32>,
    /// Memory counting may use (4G, 500M); bounds the k-mers counted at once. Default: half
    /// of the memory available.
    #[arg(long, value_parser = crate::cli_io::count64)]
    max_memory: Option<u64>,
    /// Where the counting sorts (and `assemble`'s compaction) run: auto, cpu or cuda (k <= 31
    /// only).
    #[arg(long, default_value = "auto")]
    backend: Exec,
}

impl CountArgs {
    fn options(&self) -> CountOptions {
        let mut o = CountOptions::new(self.k);
        o.min_count = self.min_count;
        o.max_count = self.max_count.unwrap_or(u32::MAX);
        o.max_memory = self.max_memory.unwrap_or(0);
        o.exec = self.backend;
        o
    }
}

/// Counts with a spinner of reads read (hidden under `--json`); returns the counts and the
/// time taken.
fn count_with_progress<W: CountWord>(
    args: &CountArgs,
    json: bool,
) -> Result<(KmerCounts<W>, Duration)> {
    let sources: Vec<ReadSource<'_>> = args.reads.iter().map(|p| ReadSource::File(p)).collect();
    let bar = if json {
        indicatif::ProgressBar::hidden()
    } else {
        indicatif::ProgressBar::new_spinner()
    };
    let t = Instant::now();
    let counts = count_kmers::<W>(&sources, &args.options(), &mut |s| {
        bar.set_message(format!("reading: {} reads, {} bases", s.reads, s.letters));
        bar.tick();
    })?;
    bar.finish_and_clear();
    Ok((counts, t.elapsed()))
}

/// The peak resident memory of this process in bytes (Linux `VmHWM`).
fn peak_memory() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let kib: u64 = s
        .lines()
        .find(|l| l.starts_with("VmHWM:"))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()?;
    Some(kib * 1024)
}

/// Demo rows: counting and unitigs of reads simulated from a random genome, checked against
/// the genome (every solid k-mer is one of the genome's) and by [`verify_unitigs`].
pub(crate) fn demo(size: DemoSize, rows: &mut Rows) {
    let (len, k) = match size {
        DemoSize::Small => (200_000, 31),
        DemoSize::Large => (5_000_000, 31),
    };
    let genome = random_genome(len, 25);
    let reads = simulate_reads(&genome, 150, 20.0, 0.002, 26);
    let fasta = reads_to_fasta(&reads);
    let n = reads.iter().map(|r| (r.len() - k + 1) as u64).sum();
    let t = Instant::now();
    let counted = count_kmers::<u64>(
        &[ReadSource::Bytes(&fasta, "simulated.fa")],
        &CountOptions {
            exec: Exec::Cpu,
            ..CountOptions::new(k)
        },
        &mut |_| {},
    );
    let c = match counted {
        Ok(c) => c,
        Err(e) => {
            rows.push(DemoRow::failed("k-mer counting", n, e));
            return;
        }
    };
    let counting = t.elapsed();
    // every solid k-mer of error-free positions is in the genome; errors seen twice are rare
    let genome_kmers: std::collections::HashSet<u64> = (0..=genome.len() - k)
        .filter_map(|i| assembly::pack::<u64>(&genome[i..], k).map(|x| assembly::canonical(x, k)))
        .collect();
    let in_genome = c.kmers.iter().filter(|x| genome_kmers.contains(x)).count();
    let ok = c.stats.kmers_seen == n && in_genome * 100 >= c.kmers.len() * 99;
    rows.push(DemoRow::new(
        "k-mer counting (k=31)",
        n,
        Backend::Cpu,
        counting,
        ok,
    ));
    let t = Instant::now();
    let g = compact(&c.kmers, &c.counts, k);
    let compaction = t.elapsed();
    let verified = verify_unitigs(&g, &c.kmers, &c.counts);
    let row = DemoRow::new(
        "unitigs (compacted De Bruijn graph)",
        c.kmers.len() as u64,
        Backend::Cpu,
        compaction,
        verified.is_ok(),
    );
    rows.push(match verified {
        Ok(()) => row,
        Err(e) => row.with_note(e),
    });
    if gpu_runtime::gpu().is_ok() {
        let t = Instant::now();
        let on_gpu = compact_with(&c.kmers, &c.counts, k, Exec::Cuda);
        let time = t.elapsed();
        let row = |ok| {
            DemoRow::new(
                "unitigs (compacted De Bruijn graph)",
                c.kmers.len() as u64,
                Backend::Cuda,
                time,
                ok,
            )
        };
        rows.push(match on_gpu {
            // the GPU's unitigs must be the CPU's, unitig for unitig
            Ok(h) if h == g => row(true).with_note("includes transfers"),
            Ok(_) => row(false).with_note("differs from the CPU's unitigs"),
            Err(e) => DemoRow::failed(
                "unitigs (compacted De Bruijn graph)",
                c.kmers.len() as u64,
                e,
            ),
        });
    }
}
