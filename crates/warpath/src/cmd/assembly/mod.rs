//! `warpath kmers`, `warpath assemble` and `warpath query` (the assembly crate): one file per
//! subcommand; here what they share (the reads and counting arguments, counting with progress,
//! peak memory, outputs, Ctrl-C) and the rows of `warpath demo`.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};
use std::time::Instant;

use anyhow::Result;
use assembly::{
    AssemblyError, Cancel, CountOptions, Exec, PartialFile, Progress, ReadSource, compact,
    compact_with, count_kmers, random_genome, reads_to_fasta, simulate_reads, verify_unitigs,
};
use gpu_runtime::Backend;
use indicatif::{ProgressBar, ProgressStyle};
use warpath_io::Output;

use crate::report::{DemoRow, DemoSize, Rows};

mod assemble;
mod kmers;
mod query;
mod simulate;

pub(crate) use assemble::{AssembleArgs, run_assemble};
pub(crate) use kmers::{KmersArgs, run_kmers};
pub(crate) use query::{QueryArgs, run_query};
pub(crate) use simulate::{SimulateArgs, run_simulate};

/// The reads and counting options both subcommands take.
#[derive(clap::Args)]
pub(crate) struct CountArgs {
    /// FASTA or FASTQ files, plain or gzip, read one after the other.
    #[arg(value_name = "READS")]
    reads: Vec<PathBuf>,
    /// k-mer length: odd, from 3 to 63.
    #[arg(long)]
    k: usize,
    /// Drop k-mers seen fewer times (sequencing errors are mostly seen once). Default: 2; 1
    /// for a colored graph, whose inputs are mostly assemblies (there it applies to each
    /// input alone).
    #[arg(long)]
    min_count: Option<u32>,
    /// Drop k-mers seen more times.
    #[arg(long)]
    max_count: Option<u32>,
    /// A bound on the peak resident memory of the run (4G, 500M). Default: half of the memory
    /// available when the run starts. The buckets of k-mers go to temporary files and every
    /// array is sized to fit; a bucket too large for its thread's share is counted in passes.
    #[arg(long, value_parser = crate::cli_io::count64)]
    max_memory: Option<u64>,
    /// Folder for the temporary files (about a byte per base of reads at the peak). Default:
    /// the folder of the first output file, else the current folder. They are removed when the
    /// run ends, fails or is stopped with Ctrl-C.
    #[arg(long, value_name = "DIR")]
    temp_dir: Option<PathBuf>,
    /// Store the temporary files that shrink (super-k-mers, pieces, links, glue, runs) as LZ4
    /// blocks, as GGCAT compresses its intermediate files: about a quarter less temporary
    /// disk for a pangenome of related genomes, a few percent more time.
    #[arg(long)]
    compress_temp: bool,
    /// Worker threads. Default: RAYON_NUM_THREADS, else every core.
    #[arg(long)]
    threads: Option<usize>,
    /// Number of minimizer buckets (KMC's -n). Default: from the input's size and
    /// --max-memory (a bucket holds about 2^21 k-mers, and fits a thread's share twice over).
    #[arg(long)]
    buckets: Option<usize>,
    /// Where the counting sorts (and `assemble`'s compaction) run: auto, cpu or cuda (k <= 31
    /// only).
    #[arg(long, default_value = "auto")]
    backend: Exec,
}

impl CountArgs {
    /// The minimum count asked for, or `default`.
    fn min_count_or(&self, default: u32) -> u32 {
        self.min_count.unwrap_or(default)
    }

    /// A usage error when no READS were given.
    fn require_reads(&self) -> Result<()> {
        if self.reads.is_empty() {
            return Err(crate::fail::usage("give at least one READS file"));
        }
        Ok(())
    }

    /// The counting options, with temporary files in `temp_dir` (or the folder of
    /// `first_output`, or the current folder) and the Ctrl-C flag.
    fn options(&self, first_output: Option<&Path>) -> Result<CountOptions> {
        if self.threads == Some(0) {
            return Err(crate::fail::usage("--threads must be at least 1"));
        }
        let mut o = CountOptions::new(self.k);
        o.min_count = self.min_count_or(2);
        o.max_count = self.max_count.unwrap_or(u32::MAX);
        o.max_memory = self.max_memory.unwrap_or_else(assembly::default_max_memory);
        o.exec = self.backend;
        o.compress_temp = self.compress_temp;
        o.threads = self.threads.unwrap_or(0);
        if self.buckets == Some(0) {
            return Err(crate::fail::usage("--buckets must be at least 1"));
        }
        o.partitions = self.buckets.unwrap_or(0);
        let dir = match (&self.temp_dir, first_output) {
            (Some(d), _) => d.clone(),
            (None, Some(p)) => match p.parent() {
                Some(parent) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
                _ => PathBuf::from("."),
            },
            (None, None) => PathBuf::from("."),
        };
        if !dir.is_dir() {
            return Err(crate::fail::usage(format!(
                "--temp-dir {}: no such folder",
                dir.display()
            )));
        }
        o.temp_dir = Some(dir);
        o.cancel = Some(ctrl_c());
        Ok(o)
    }
}

/// The run's cancel flag, set by Ctrl-C: the first stops the run at the next batch or bucket
/// (its temporary files and partial outputs are removed on the way out); a second removes
/// them at once and exits with status 130.
fn ctrl_c() -> Arc<Cancel> {
    static FLAG: OnceLock<Arc<Cancel>> = OnceLock::new();
    FLAG.get_or_init(|| {
        let flag = Arc::new(Cancel::new());
        let seen = Arc::clone(&flag);
        let _ = ctrlc::set_handler(move || {
            if seen.is_cancelled() {
                assembly::remove_temporary_files();
                std::process::exit(130);
            }
            seen.cancel();
        });
        flag
    })
    .clone()
}

/// A progress bar on standard error that follows the stages of a run: bytes while reading,
/// buckets (or unitigs) per stage after. Hidden under `--json`.
pub(crate) struct StageBar {
    bar: ProgressBar,
    stage: &'static str,
    input_bytes: u64,
}

impl StageBar {
    pub(crate) fn new(json: bool, input_bytes: u64) -> StageBar {
        let bar = if json {
            ProgressBar::hidden()
        } else {
            ProgressBar::new_spinner()
        };
        StageBar {
            bar,
            stage: "",
            input_bytes,
        }
    }

    pub(crate) fn update(&mut self, p: Progress) {
        match p {
            Progress::Reading(s) => {
                if self.stage != "reading" {
                    self.stage = "reading";
                    self.bar.set_style(
                        ProgressStyle::with_template(
                            "reading [{elapsed_precise}] {wide_bar} {bytes}/{total_bytes} {msg}",
                        )
                        .unwrap_or_else(|_| ProgressStyle::default_bar()),
                    );
                    self.bar.set_length(self.input_bytes.max(1));
                }
                self.bar.set_position(s.letters.min(self.input_bytes));
                self.bar.set_message(format!("{} reads", s.reads));
            }
            Progress::Stage { stage, done, total } => {
                if self.stage != stage {
                    self.stage = stage;
                    self.bar.set_style(
                        ProgressStyle::with_template(&format!(
                            "{stage} [{{elapsed_precise}}] {{wide_bar}} {{pos}}/{{len}} {{msg}}"
                        ))
                        .unwrap_or_else(|_| ProgressStyle::default_bar()),
                    );
                    self.bar.set_message(match stage {
                        "ordering" => "unitigs",
                        _ => "buckets",
                    });
                }
                self.bar.set_length(total.max(1));
                self.bar.set_position(done);
            }
            _ => {}
        }
    }

    pub(crate) fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

/// Bytes of the read files (what the reading bar counts up to; gzip files count their
/// compressed size, so the bar runs past its end on them).
fn input_bytes(reads: &[PathBuf]) -> u64 {
    reads
        .iter()
        .filter_map(|p| std::fs::metadata(p).ok())
        .map(|m| m.len())
        .sum()
}

/// Where one output goes while it is written: a partial file renamed on success, or standard
/// output (not locked: a sink may be written from another thread; at most one output goes
/// there, through a buffer of a megabyte).
pub(crate) enum Sink {
    File(PartialFile),
    Stdout(std::io::BufWriter<std::io::Stdout>),
}

impl Sink {
    pub(crate) fn open(o: &Output) -> Result<Sink, AssemblyError> {
        Ok(match o.path() {
            Some(p) => Sink::File(PartialFile::create(p)?),
            None => Sink::Stdout(std::io::BufWriter::with_capacity(
                1 << 20,
                std::io::stdout(),
            )),
        })
    }

    pub(crate) fn writer(&mut self) -> &mut dyn Write {
        match self {
            Sink::File(f) => f,
            Sink::Stdout(s) => s,
        }
    }

    /// Makes the output visible: renames the file, flushes standard output.
    pub(crate) fn commit(self) -> Result<()> {
        match self {
            Sink::File(f) => f.commit()?,
            Sink::Stdout(mut s) => s.flush()?,
        }
        Ok(())
    }
}

/// Writes one output with `f` into a [`Sink`] (not yet committed).
pub(crate) fn write_out(
    o: Option<&Output>,
    f: impl FnOnce(&mut dyn Write) -> Result<(), AssemblyError>,
) -> Result<Option<Sink>> {
    let Some(o) = o else {
        return Ok(None);
    };
    let mut sink = Sink::open(o)?;
    let path = o
        .path()
        .map_or_else(|| PathBuf::from("standard output"), Path::to_path_buf);
    f(sink.writer()).map_err(|e| match e {
        // a failed write names the output, not the placeholder the store gave it
        AssemblyError::Disk { error, .. } => AssemblyError::Disk { path, error },
        other => other,
    })?;
    Ok(Some(sink))
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

/// The `--json` report of `kmers` or `assemble` (`command`): the counting figures both share,
/// then `rest` (a JSON object), printed as one line.
fn print_count_report(command: &str, k: usize, s: &assembly::CountStats, rest: serde_json::Value) {
    let report = serde_json::json!({
        "command": command,
        "k": k,
        "reads": s.reads.reads,
        "bases": s.reads.letters - s.reads.non_bases,
        "kmers_seen": s.kmers_seen,
        "distinct": s.distinct,
        "solid": s.solid,
    });
    crate::cli_io::print_merged_json(report, rest);
}
