//! `warpath`: run warpath's algorithms on your data or on generated inputs.
//!
//! Every subcommand accepts `--json` and then prints one JSON object (with `n`, `backend`,
//! `seconds` and `verified` where they apply) instead of text.

mod cmd;
mod report;

use clap::{Parser, Subcommand};

/// GPU-accelerated algorithms that also run well on plain CPUs.
#[derive(Parser)]
#[command(name = "warpath", version, about, propagate_version = true)]
struct Cli {
    /// Print one JSON object instead of human-readable text.
    #[arg(long, global = true)]
    json: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Show the CUDA device warpath would use, or why there is none (always exits 0).
    Info(cmd::info::Args),
    /// Run every algorithm on a built-in input, verify each result, print a table.
    Demo(cmd::demo::Args),
    /// Radix-sort numbers from a file or generated (CPU or GPU), verify and report throughput.
    Sort(cmd::sort::SortArgs),
    /// Distinct values (with counts) of numbers from a file or generated, verified.
    Distinct(cmd::sort::DistinctArgs),
    /// Euler circuit or path of a graph file or a generated Eulerian digraph.
    Euler(cmd::graph::EulerArgs),
    /// Summarise a graph file; write GraphViz DOT and render it.
    Graph(cmd::graph::GraphArgs),
    /// De Bruijn graph of the k-mers of FASTA/FASTQ reads, and the sequence of an Euler path.
    DebruijnGraph(cmd::graph::DebruijnArgs),
    /// Permutations by lexicographic rank (batches, streaming) or a search over all n!.
    Perm(cmd::perm::Args),
    /// De Bruijn sequence B(k, n) (FKM or Euler), optionally linear, verified.
    Debruijn(cmd::perm::DeBruijnArgs),
    /// Solve a linear assignment problem (CSV/.npy file or generated) with any solver.
    Lap(cmd::lap::Args),
    /// The assignment experiments: approximation factors on Exp(1) costs, runtime vs n.
    LapExperiment(cmd::lap::ExperimentArgs),
    /// k-means clustering of a CSV/.npy file or generated points (CPU, GPU or MPI).
    Kmeans(Box<cmd::kmeans::Args>),
    /// Solve the spatial FitzHugh–Nagumo equation (explicit, adaptive or implicit scheme).
    Fhn(cmd::fhn::Args),
}

fn main() {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Info(args) => cmd::info::run(args, cli.json),
        Command::Demo(args) => cmd::demo::run(args, cli.json),
        Command::Sort(args) => cmd::sort::run_sort(args, cli.json),
        Command::Distinct(args) => cmd::sort::run_distinct(args, cli.json),
        Command::Euler(args) => cmd::graph::run_euler(args, cli.json),
        Command::Graph(args) => cmd::graph::run_graph(args, cli.json),
        Command::DebruijnGraph(args) => cmd::graph::run_debruijn(args, cli.json),
        Command::Perm(args) => cmd::perm::run(args, cli.json),
        Command::Debruijn(args) => cmd::perm::run_debruijn(args, cli.json),
        Command::Lap(args) => cmd::lap::run(args, cli.json),
        Command::LapExperiment(args) => cmd::lap::run_experiment(args, cli.json),
        Command::Kmeans(args) => cmd::kmeans::run(*args, cli.json),
        Command::Fhn(args) => cmd::fhn::run(args, cli.json),
    };
    if let Err(e) = result {
        if e.downcast_ref::<report::AlreadyReported>().is_some() {
            if !cli.json {
                eprintln!("error: {e:#}");
            }
        } else if cli.json {
            println!("{}", serde_json::json!({ "error": format!("{e:#}") }));
        } else {
            eprintln!("error: {e:#}");
        }
        std::process::exit(1);
    }
}
