//! `warpath debruijn-graph`: the De Bruijn graph of the k-mers of reads, and the sequence an
//! Euler path spells.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Context, Result};
use gpu_runtime::{Backend, Exec};
use graph_core::{EulerError, euler_path, is_euler_path};
use warpath_io::{Format, Output};

use super::input::named;
use crate::cli_io::{check_backend, one_stdout, outputs};
use crate::fail::unverified;
use crate::report::progress;

/// Arguments of `warpath debruijn-graph`.
#[derive(clap::Args)]
#[command(after_help = "\
Examples:
  warpath debruijn-graph --reads reads.fa --k 21 --path-out contig.fa --graph-out graph.adj")]
pub(crate) struct DebruijnArgs {
    /// FASTA or FASTQ reads (DNA; gzip allowed).
    #[arg(long)]
    reads: PathBuf,
    /// k-mer length (2..=32): edges are the distinct k-mers, vertices their (k-1)-mers.
    #[arg(long)]
    k: u32,
    /// Write the graph here as `a -> b, c` adjacency lines (.adj or .txt), or -.
    #[arg(long)]
    graph_out: Option<PathBuf>,
    /// Write the sequence spelled by an Euler path here (.fa/.fasta), when one exists, or -
    /// (the default prints the sequence, except under --json).
    #[arg(long)]
    path_out: Option<PathBuf>,
    /// Where to run the Euler path: auto, cpu or cuda.
    #[arg(long, default_value = "auto")]
    backend: Exec,
}

pub(crate) fn run_debruijn(args: DebruijnArgs, json: bool) -> Result<()> {
    check_backend(args.backend, "debruijn-graph", true)?;
    let (graphs, fasta): (&[Format], &[Format]) =
        (&[Format::Adjacency, Format::Text], &[Format::Fasta]);
    let [graph_out, path_out] = outputs(
        json,
        [
            ("--graph-out", args.graph_out.as_deref(), graphs, false),
            ("--path-out", args.path_out.as_deref(), fasta, false),
        ],
    )?;
    one_stdout(&[("--graph-out", &graph_out), ("--path-out", &path_out)])?;
    let bar = progress(3, "debruijn-graph", json);
    let started = Instant::now();
    let kg = graph_core::kmer_graph_from_file(&args.reads, args.k)
        .with_context(|| format!("reading {}", args.reads.display()))?;
    let g = &kg.graph;
    bar.inc(1);
    if let Some(o) = &graph_out {
        let mut w = o.open()?;
        graph_core::write_adjacency(g, &mut w)?;
        w.finish()?;
    }
    bar.inc(1);
    let (path, backend, reason) = match euler_path(g, args.backend) {
        Ok((p, b)) if g.edge_count() > 0 => (Some(p), b, None),
        Ok((_, b)) => (None, b, Some("the reads have no k-mers".to_owned())),
        // A GPU that fails is an error, not "no path".
        Err(EulerError::Gpu(e)) => return Err(e.into()),
        Err(e) => (
            None,
            Backend::Cpu,
            Some(named(&|v| g.vertex_label(v), e).to_string()),
        ),
    };
    let verified = path.as_ref().is_none_or(|p| is_euler_path(g, p));
    let spelled = path.as_ref().map(|p| graph_core::spell_walk(g, p));
    if let (Some(o), Some(seq)) = (&path_out, &spelled) {
        let mut f = o.open()?;
        f.write_all(format!(">euler_path k={} length={}\n", args.k, seq.len()).as_bytes())?;
        for chunk in seq.as_bytes().chunks(80) {
            f.write_all(chunk)?;
            f.write_all(b"\n")?;
        }
        f.finish()?;
    }
    bar.finish_and_clear();
    let seconds = started.elapsed().as_secs_f64();
    if json {
        super::print_graph_json(
            g,
            backend,
            seconds,
            serde_json::json!({
                "k": kg.k,
                "reads": kg.reads,
                "kmer_occurrences": kg.kmer_occurrences,
                "skipped_windows": kg.skipped_windows,
                "euler_path": path.is_some(),
                "no_path_reason": reason,
                "hint": reason.as_ref().map(|_| assemble_hint(&args.reads, args.k)),
                "sequence_length": spelled.as_ref().map(String::len),
                "verified": verified,
                "graph_out": args.graph_out,
                "path_out": args.path_out,
            }),
        );
    } else {
        println!(
            "{} reads, {} k-mer occurrences, {} distinct {}-mers (edges), {} vertices, {} windows skipped",
            kg.reads,
            kg.kmer_occurrences,
            g.edge_count(),
            kg.k,
            g.vertex_count(),
            kg.skipped_windows
        );
        match (&spelled, &reason) {
            (Some(seq), _) => {
                println!(
                    "Euler path on {backend}: spells {} bases (verified: {})",
                    seq.len(),
                    if verified { "yes" } else { "NO" }
                );
                if args.path_out.is_none() {
                    println!("{seq}");
                }
            }
            (None, Some(r)) => {
                if r.starts_with("no Euler path") {
                    println!("{r}");
                } else {
                    println!("no Euler path: {r}");
                }
                println!("  {}", assemble_hint(&args.reads, args.k));
            }
            (None, None) => {}
        }
        if let Some(p) = graph_out.as_ref().and_then(Output::path) {
            println!("graph written to {}", p.display());
        }
        if let (Some(p), Some(_)) = (path_out.as_ref().and_then(Output::path), &spelled) {
            println!("sequence written to {}", p.display());
        }
    }
    if !verified {
        return Err(unverified("the Euler path failed verification"));
    }
    Ok(())
}

/// What to run instead when reads have no Euler path (real reads rarely do).
fn assemble_hint(reads: &std::path::Path, k: u32) -> String {
    let odd = if k % 2 == 1 {
        k
    } else {
        k.saturating_sub(1).max(3)
    };
    format!(
        "real reads rarely have one (sequencing errors, both strands, repeats): `warpath \
         assemble {} --k {odd} --contigs contigs.fa` counts canonical k-mers, drops the rare \
         ones and builds unitigs and contigs",
        reads.display()
    )
}
