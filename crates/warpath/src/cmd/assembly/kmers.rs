//! `warpath kmers`: canonical k-mer counts of reads (KMC / jellyfish's job), as text or `.npy`,
//! with a count histogram.

use std::path::PathBuf;

use std::time::Instant;

use anyhow::Result;
use assembly::{AssemblyError, CountWord, ReadSource, count_kmer_buckets, unpack, write_histogram};
use warpath_io::npy::write_npy_header;
use warpath_io::{Format, Output};

use super::{CountArgs, StageBar, input_bytes, peak_memory, write_out};
use crate::cli_io::{one_stdout, outputs, report, written};
use crate::fail::unverified;
use crate::report::format_seconds;

/// Arguments of `warpath kmers`.
#[derive(clap::Args)]
#[command(after_help = "\
Counts canonical k-mers (a k-mer and its reverse complement are one) of FASTA/FASTQ reads, as
`jellyfish count -C` and `kmc` do; reads are split at N and other IUPAC codes.

Outputs:
  .txt / .tsv / -   KMER<TAB>COUNT lines, k-mers in lexicographic order (jellyfish dump -c)
  .npy              uint64 array: (n, 2) [kmer, count] for k <= 31, the k-mer 2-bit packed
                    (A=0 C=1 G=2 T=3, first base highest); (n, 3) [high, low, count] above
  --histo           COUNT NUMBER lines over every distinct k-mer (jellyfish histo)

Examples:
  warpath kmers reads.fq.gz --k 31 --output counts.txt --histo histo.txt
  warpath kmers a.fa b.fa --k 21 --min-count 1 --output counts.npy --json")]
pub(crate) struct KmersArgs {
    #[command(flatten)]
    count: CountArgs,
    /// Where the counts go: .txt, .tsv, .npy or - (standard output, the default without
    /// --json).
    #[arg(long, short)]
    output: Option<PathBuf>,
    /// Write the count histogram here (.txt or -).
    #[arg(long)]
    histo: Option<PathBuf>,
}

/// `warpath kmers`.
pub(crate) fn run_kmers(args: KmersArgs, json: bool) -> Result<()> {
    // before any thread starts (see `run_assemble`)
    assembly::limit_allocator_arenas(args.count.threads.unwrap_or(0));
    args.count.require_reads()?;
    crate::cli_io::check_backend(args.count.backend, "kmers", args.count.k <= 31)?;
    let tables: &[Format] = &[Format::Text, Format::Tsv, Format::Npy];
    let [out, histo] = outputs(
        json,
        [
            ("--output", args.output.as_deref(), tables, true),
            ("--histo", args.histo.as_deref(), &[Format::Text], false),
        ],
    )?;
    one_stdout(&[("--output", &out), ("--histo", &histo)])?;
    if args.count.k <= 31 {
        kmers_typed::<u64>(&args, out.as_ref(), histo.as_ref(), json)
    } else {
        kmers_typed::<u128>(&args, out.as_ref(), histo.as_ref(), json)
    }
}

fn kmers_typed<W: CountWord>(
    args: &KmersArgs,
    out: Option<&Output>,
    histo: Option<&Output>,
    json: bool,
) -> Result<()> {
    let k = args.count.k;
    let options = args.count.options(out.and_then(Output::path))?;
    let sources: Vec<ReadSource<'_>> = args
        .count
        .reads
        .iter()
        .map(|p| ReadSource::File(p))
        .collect();
    let mut bar = StageBar::new(json, input_bytes(&args.count.reads));
    let t = Instant::now();
    let buckets = count_kmer_buckets::<W>(&sources, &options, &mut |p| bar.update(p));
    bar.finish();
    let buckets = buckets?;
    let s = buckets.stats.clone();
    // independent checks as the k-mers stream out: every occurrence is in the histogram; the
    // solid k-mers come sorted, distinct, canonical and within the counts asked for
    let occurrences: u64 = s.histogram.iter().map(|(n, h)| n * h).sum();
    let max = args.count.max_count.unwrap_or(u32::MAX);
    let mut verified = occurrences == s.kmers_seen;
    let mut last: Option<W> = None;
    let mut streamed = 0u64;
    let wide = k > 31;
    let sink = write_out(out, |w| {
        let io = |e| AssemblyError::Disk {
            path: PathBuf::new(),
            error: e,
        };
        let npy = out.is_some_and(|o| o.format == Format::Npy);
        if npy {
            let cols = if wide { 3 } else { 2 };
            write_npy_header::<u64, _>(&mut *w, &[s.solid as usize, cols]).map_err(|e| {
                AssemblyError::Disk {
                    path: PathBuf::new(),
                    error: std::io::Error::other(e.to_string()),
                }
            })?;
        }
        let mut text = Vec::with_capacity(1 << 20);
        buckets.for_each_sorted(&mut |kmers, counts| {
            text.clear();
            for (&x, &n) in kmers.iter().zip(counts) {
                verified &= last.is_none_or(|p| p < x)
                    && assembly::canonical(x, k) == x
                    && n >= args.count.min_count_or(2)
                    && n <= max;
                last = Some(x);
                if npy {
                    let v = x.to_u128();
                    if wide {
                        text.extend_from_slice(&((v >> 64) as u64).to_le_bytes());
                    }
                    text.extend_from_slice(&(v as u64).to_le_bytes());
                    text.extend_from_slice(&u64::from(n).to_le_bytes());
                } else {
                    text.extend(unpack(x, k).bytes());
                    text.push(b'\t');
                    text.extend_from_slice(n.to_string().as_bytes());
                    text.push(b'\n');
                }
            }
            streamed += kmers.len() as u64;
            w.write_all(&text).map_err(io)
        })
    })?;
    verified &= streamed == s.solid || out.is_none();
    let histo_sink = write_out(histo, |w| {
        write_histogram(w, &s.histogram).map_err(|e| AssemblyError::Disk {
            path: PathBuf::new(),
            error: e,
        })
    })?;
    if verified {
        for done in [sink, histo_sink].into_iter().flatten() {
            done.commit()?;
        }
    }
    let took = t.elapsed();
    let seconds = took.as_secs_f64();
    if json {
        super::print_count_report(
            "kmers",
            k,
            &s,
            serde_json::json!({
                "min_count": args.count.min_count_or(2),
                "max_count": args.count.max_count,
                "partitions": s.partitions,
                "max_memory_bytes": options.max_memory,
                "temp_dir": options.temp_dir.as_ref().map(|d| d.display().to_string()),
                "temp_disk_bytes": buckets.temp_bytes(),
                "backend": s.backend,
                "seconds": seconds,
                "kmers_per_second": s.kmers_seen as f64 / seconds.max(1e-12),
                "peak_memory_bytes": peak_memory(),
                "verified": verified,
                "output": out.map(Output::describe),
                "histo": histo.map(Output::describe),
            }),
        );
    } else {
        report(
            &format!(
                "kmers: {} reads, {} {k}-mers seen, {} distinct, {} solid (count >= {}) on {} in {} ({:.1} M k-mers/s), {}{}",
                s.reads.reads,
                s.kmers_seen,
                s.distinct,
                s.solid,
                args.count.min_count_or(2),
                s.backend,
                format_seconds(seconds),
                s.kmers_seen as f64 / seconds.max(1e-12) / 1e6,
                if verified {
                    "verified"
                } else {
                    "VERIFICATION FAILED"
                },
                written(out)
            ),
            out,
        );
    }
    if !verified {
        return Err(unverified("the k-mer counts failed their checks"));
    }
    Ok(())
}
