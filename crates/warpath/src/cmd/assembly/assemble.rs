//! `warpath assemble`: reads to the maximal unitigs of their De Bruijn graph (BCALM2's job),
//! as BCALM-style FASTA, GFA 1.0 and GraphViz.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::Result;
use assembly::{
    ContigOptions, CountWord, compact_with, compaction_backend, contigs, n50, unique_links,
    verify_unitigs, write_dot, write_gfa, write_unitigs_fasta,
};
use warpath_io::{Format, Output};

use super::{CountArgs, count_with_progress, peak_memory};
use crate::cli_io::{output, report, written};
use crate::fail::{unverified, usage};
use crate::report::format_seconds;

/// Arguments of `warpath assemble`.
#[derive(clap::Args)]
#[command(after_help = "\
Counts canonical k-mers, keeps those seen at least --min-count times (the solid ones), and
compacts them into the maximal unitigs of the bidirected De Bruijn graph: the same unitigs as
BCALM2, Cuttlefish and GGCAT (circular ones included). --backend picks where counting and
compaction run (cuda: both on the GPU, k <= 31; auto: the GPU for large inputs when one is
present); the unitigs are the same, unitig for unitig, wherever they are built. Each unitig is checked afterwards: its
k-mers are solid and its own, and together they hold every solid k-mer exactly once.

Outputs:
  --unitigs  FASTA with BCALM2's headers: >ID LN:i:LEN KC:i:COUNT km:f:MEAN L:+:ID:- ...
             (standard output by default, except under --json)
  --gfa      GFA 1.0 (S lines with LN/KC/km tags, L lines with (k-1)M overlaps); Bandage opens it
  --dot      GraphViz: a box per unitig, an edge per link
  --contigs  FASTA of contigs: the graph cleaned of tips (< 2k), bubbles of single errors and
             unitigs far below their neighbours' coverage, then walked along unique links;
             contigs of at least 2k bases, longest first (>contig_N LN:i:LEN km:f:MEAN)

Examples:
  warpath assemble reads.fq.gz --k 31 --unitigs unitigs.fa --gfa graph.gfa --contigs contigs.fa
  warpath assemble r1.fa r2.fa --k 21 --min-count 3 --unitigs u.fa --json")]
pub(crate) struct AssembleArgs {
    #[command(flatten)]
    count: CountArgs,
    /// Write the unitigs here (.fa, .fasta or -).
    #[arg(long)]
    unitigs: Option<PathBuf>,
    /// Write the compacted graph as GFA 1.0 here (.gfa or -).
    #[arg(long)]
    gfa: Option<PathBuf>,
    /// Write the compacted graph as GraphViz DOT here (.dot or -).
    #[arg(long)]
    dot: Option<PathBuf>,
    /// Write contigs here (.fa, .fasta or -): the cleaned graph walked along unique links.
    #[arg(long)]
    contigs: Option<PathBuf>,
}

/// `warpath assemble`.
pub(crate) fn run_assemble(args: AssembleArgs, json: bool) -> Result<()> {
    crate::cli_io::check_backend(args.count.backend, "assemble", args.count.k <= 31)?;
    let unitigs = output(
        "--unitigs",
        args.unitigs.as_deref(),
        &[Format::Fasta],
        json,
        true,
    )?;
    let gfa = output("--gfa", args.gfa.as_deref(), &[Format::Gfa], json, false)?;
    let dot = output("--dot", args.dot.as_deref(), &[Format::Dot], json, false)?;
    let contigs = output(
        "--contigs",
        args.contigs.as_deref(),
        &[Format::Fasta],
        json,
        false,
    )?;
    let to_stdout = [&unitigs, &gfa, &dot, &contigs]
        .iter()
        .filter(|o| o.as_ref().is_some_and(Output::is_stdout))
        .count();
    if to_stdout > 1 {
        return Err(usage(
            "only one of --unitigs, --gfa, --dot and --contigs can write to standard output",
        ));
    }
    let outs = Outs {
        unitigs: unitigs.as_ref(),
        gfa: gfa.as_ref(),
        dot: dot.as_ref(),
        contigs: contigs.as_ref(),
    };
    if args.count.k <= 31 {
        assemble_typed::<u64>(&args, &outs, json)
    } else {
        assemble_typed::<u128>(&args, &outs, json)
    }
}

struct Outs<'a> {
    unitigs: Option<&'a Output>,
    gfa: Option<&'a Output>,
    dot: Option<&'a Output>,
    contigs: Option<&'a Output>,
}

fn assemble_typed<W: CountWord>(args: &AssembleArgs, outs: &Outs<'_>, json: bool) -> Result<()> {
    let k = args.count.k;
    let (c, counting) = count_with_progress::<W>(&args.count, json)?;
    let compacted_on = compaction_backend::<W>(c.kmers.len(), args.count.backend)?;
    let t = Instant::now();
    let g = compact_with(&c.kmers, &c.counts, k, args.count.backend)?;
    let compaction = t.elapsed();
    let t = Instant::now();
    let check = verify_unitigs(&g, &c.kmers, &c.counts);
    let verification = t.elapsed();
    let t = Instant::now();
    let links = g.all_links(&c.kmers);
    if let Some(o) = outs.unitigs {
        let mut w = o.open()?;
        write_unitigs_fasta::<W>(&mut w, &g, &links)?;
        w.finish()?;
    }
    if let Some(o) = outs.gfa {
        let mut w = o.open()?;
        write_gfa(&mut w, &g, &links)?;
        w.finish()?;
    }
    if let Some(o) = outs.dot {
        let mut w = o.open()?;
        write_dot(&mut w, &g, &links)?;
        w.finish()?;
    }
    let writing = t.elapsed();
    let t = Instant::now();
    let found = match outs.contigs {
        Some(o) => {
            let found = contigs(&g, &links, &ContigOptions::default());
            let mut w = o.open()?;
            for (i, c) in found.iter().enumerate() {
                w.write_all(
                    format!(
                        ">contig_{i} LN:i:{} km:f:{:.1}\n",
                        c.sequence.len(),
                        c.mean_count
                    )
                    .as_bytes(),
                )?;
                w.write_all(&c.sequence)?;
                w.write_all(b"\n")?;
            }
            w.finish()?;
            Some(found)
        }
        None => None,
    };
    let contig_time = t.elapsed();
    let contig_lengths: Option<Vec<usize>> = found
        .as_ref()
        .map(|f| f.iter().map(|c| c.sequence.len()).collect());
    let lengths: Vec<usize> = g.unitigs.iter().map(|u| u.sequence.len()).collect();
    let total: usize = lengths.iter().sum();
    let circular = g.unitigs.iter().filter(|u| u.circular).count();
    let s = &c.stats;
    let seconds = (counting + compaction + verification + writing + contig_time).as_secs_f64();
    let verified = check.is_ok();
    if json {
        println!(
            "{}",
            serde_json::json!({
                "command": "assemble",
                "k": k,
                "reads": s.reads.reads,
                "bases": s.reads.letters - s.reads.non_bases,
                "kmers_seen": s.kmers_seen,
                "distinct": s.distinct,
                "solid": s.solid,
                "min_count": args.count.min_count,
                "unitigs": g.unitigs.len(),
                "circular_unitigs": circular,
                "links": unique_links(&links).len(),
                "total_length": total,
                "n50": n50(&lengths),
                "longest": lengths.iter().max().copied().unwrap_or(0),
                "backend": s.backend,
                "compaction_backend": compacted_on,
                "seconds": seconds,
                "stages": {
                    "counting": counting.as_secs_f64(),
                    "compaction": compaction.as_secs_f64(),
                    "verification": verification.as_secs_f64(),
                    "links_and_output": writing.as_secs_f64(),
                    "contigs": contig_time.as_secs_f64(),
                },
                "contigs": contig_lengths.as_ref().map(|l| serde_json::json!({
                    "count": l.len(),
                    "total_length": l.iter().sum::<usize>(),
                    "n50": n50(l),
                    "longest": l.first().copied().unwrap_or(0),
                })),
                "peak_memory_bytes": peak_memory(),
                "verified": verified,
                "check": check.as_ref().err(),
                "unitigs_output": outs.unitigs.map(Output::describe),
                "gfa": outs.gfa.map(Output::describe),
                "dot": outs.dot.map(Output::describe),
            })
        );
    } else {
        let quiet_to = outs
            .unitigs
            .or(outs.gfa)
            .or(outs.dot)
            .or(outs.contigs)
            .filter(|o| o.is_stdout());
        report(
            &format!(
                "assemble: {} reads, {} {k}-mers seen, {} distinct, {} solid -> {} unitigs ({} circular), {} bases, N50 {} on {} in {} (counting {}, compaction {} on {}), {}{}",
                s.reads.reads,
                s.kmers_seen,
                s.distinct,
                s.solid,
                g.unitigs.len(),
                circular,
                total,
                n50(&lengths),
                s.backend,
                format_seconds(seconds),
                format_seconds(counting.as_secs_f64()),
                format_seconds(compaction.as_secs_f64()),
                compacted_on,
                match &check {
                    Ok(()) => "verified".to_string(),
                    Err(e) => format!("VERIFICATION FAILED: {e}"),
                },
                written(outs.unitigs.filter(|o| !o.is_stdout()))
            ),
            quiet_to,
        );
        if let Some(l) = &contig_lengths {
            report(
                &format!(
                    "contigs: {} of at least {} bases, {} bases, N50 {}, longest {}{}",
                    l.len(),
                    2 * k,
                    l.iter().sum::<usize>(),
                    n50(l),
                    l.first().copied().unwrap_or(0),
                    written(outs.contigs.filter(|o| !o.is_stdout()))
                ),
                quiet_to,
            );
        }
    }
    if let Err(e) = check {
        return Err(unverified(format!("the unitigs failed verification: {e}")));
    }
    Ok(())
}
