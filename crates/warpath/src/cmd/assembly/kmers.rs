//! `warpath kmers`: canonical k-mer counts of reads (KMC / jellyfish's job), as text or `.npy`,
//! with a count histogram.

use std::path::PathBuf;

use anyhow::Result;
use assembly::{CountWord, write_counts_text, write_histogram};
use warpath_io::{Format, Output};

use super::{CountArgs, count_with_progress, peak_memory};
use crate::cli_io::{output, report, written};
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
    crate::cli_io::check_backend(args.count.backend, "kmers", args.count.k <= 31)?;
    let out = output(
        "--output",
        args.output.as_deref(),
        &[Format::Text, Format::Tsv, Format::Npy],
        json,
        true,
    )?;
    let histo = output(
        "--histo",
        args.histo.as_deref(),
        &[Format::Text],
        json,
        false,
    )?;
    if out.as_ref().is_some_and(Output::is_stdout) && histo.as_ref().is_some_and(Output::is_stdout)
    {
        return Err(crate::fail::usage(
            "--output - and --histo - both write to standard output",
        ));
    }
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
    let (c, took) = count_with_progress::<W>(&args.count, out.and_then(Output::path), json)?;
    let s = &c.stats;
    // independent checks: every occurrence is in the histogram; the solid k-mers are sorted,
    // distinct, canonical and within the counts asked for
    let occurrences: u64 = s.histogram.iter().map(|(n, h)| n * h).sum();
    let max = args.count.max_count.unwrap_or(u32::MAX);
    let verified = occurrences == s.kmers_seen
        && c.kmers.windows(2).all(|w| w[0] < w[1])
        && c.kmers.iter().all(|&x| assembly::canonical(x, k) == x)
        && c.counts
            .iter()
            .all(|&n| n >= args.count.min_count && n <= max);
    if let Some(o) = out {
        match o.format {
            Format::Npy => {
                let flat: Vec<u64> = if k <= 31 {
                    c.kmers
                        .iter()
                        .zip(&c.counts)
                        .flat_map(|(x, &n)| [x.to_u128() as u64, n as u64])
                        .collect()
                } else {
                    c.kmers
                        .iter()
                        .zip(&c.counts)
                        .flat_map(|(x, &n)| {
                            let v = x.to_u128();
                            [(v >> 64) as u64, v as u64, n as u64]
                        })
                        .collect()
                };
                o.write_array(&flat, Some(if k <= 31 { 2 } else { 3 }), None)?;
            }
            _ => {
                let mut w = o.open()?;
                write_counts_text(&mut w, &c.kmers, &c.counts, k)?;
                w.finish()?;
            }
        }
    }
    if let Some(h) = histo {
        let mut w = h.open()?;
        write_histogram(&mut w, &s.histogram)?;
        w.finish()?;
    }
    let seconds = took.as_secs_f64();
    if json {
        println!(
            "{}",
            serde_json::json!({
                "command": "kmers",
                "k": k,
                "reads": s.reads.reads,
                "bases": s.reads.letters - s.reads.non_bases,
                "kmers_seen": s.kmers_seen,
                "distinct": s.distinct,
                "solid": s.solid,
                "min_count": args.count.min_count,
                "max_count": args.count.max_count,
                "partitions": s.partitions,
                "backend": s.backend,
                "seconds": seconds,
                "kmers_per_second": s.kmers_seen as f64 / seconds.max(1e-12),
                "peak_memory_bytes": peak_memory(),
                "verified": verified,
                "output": out.map(Output::describe),
                "histo": histo.map(Output::describe),
            })
        );
    } else {
        report(
            &format!(
                "kmers: {} reads, {} {k}-mers seen, {} distinct, {} solid (count >= {}) on {} in {} ({:.1} M k-mers/s), {}{}",
                s.reads.reads,
                s.kmers_seen,
                s.distinct,
                s.solid,
                args.count.min_count,
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
