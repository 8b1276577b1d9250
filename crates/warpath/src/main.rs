//! `warpath`: run warpath's algorithms on your data or on generated inputs.
//!
//! Every subcommand accepts `--json` and then prints one JSON object (with `n`, `backend`,
//! `seconds` and `verified` where they apply) instead of text; failures, argument errors
//! included, are then `{"error": ..., "kind": ...}` with a non-zero exit.

/// `println!` that ends the program quietly when standard output's reader has gone
/// (`warpath ... | head`) instead of panicking, and reports other write errors.
macro_rules! println {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        if let Err(e) = writeln!(std::io::stdout(), $($arg)*) {
            $crate::stdout_failed(e);
        }
    }};
}

/// `print!` with the same handling as [`println!`].
#[allow(unused_macros)]
macro_rules! print {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        if let Err(e) = write!(std::io::stdout(), $($arg)*) {
            $crate::stdout_failed(e);
        }
    }};
}

mod cli_io;
mod cmd;
mod fail;
mod report;

use clap::{Parser, Subcommand};

/// GPU-accelerated algorithms that also run well on plain CPUs.
#[derive(Parser)]
#[command(
    name = "warpath",
    version,
    about,
    propagate_version = true,
    after_help = cli_io::CONVENTIONS
)]
struct Cli {
    /// Print one JSON object instead of human-readable text (errors too:
    /// {"error": ..., "kind": ...}).
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
    /// Count the canonical k-mers of FASTA/FASTQ reads (as jellyfish and KMC), with a histogram.
    Kmers(cmd::assembly::KmersArgs),
    /// Assemble reads into the unitigs of their compacted De Bruijn graph (as BCALM2): FASTA, GFA.
    Assemble(cmd::assembly::AssembleArgs),
    /// Which colors of a colored compacted De Bruijn graph hold each query's k-mers (as GGCAT).
    Query(cmd::assembly::QueryArgs),
    /// Generate benchmark inputs: `simulate pangenome` writes genomes along a random tree.
    Simulate(cmd::assembly::SimulateArgs),
    /// Permutations by lexicographic rank (batches, streaming) or a search over all n!.
    Perm(cmd::perm::Args),
    /// De Bruijn sequence of the words of length --k over an alphabet (FKM or Euler), verified.
    Debruijn(cmd::perm::DeBruijnArgs),
    /// Solve a linear assignment problem (CSV/.npy file or generated) with any solver.
    Lap(cmd::lap::Args),
    /// The assignment experiments: approximation factors on Exp(1) costs, runtime vs n.
    LapExperiment(cmd::lap::ExperimentArgs),
    /// k-means clustering of a CSV/.npy file or generated points (CPU, GPU or MPI).
    Kmeans(Box<cmd::kmeans::Args>),
    /// Solve the spatial FitzHugh–Nagumo equation (explicit, adaptive or implicit scheme).
    Fhn(Box<cmd::fhn::Args>),
    /// Rerun the seed documents' experiments; write report.json, REPORT.md and index.html.
    Reproduce(cmd::reproduce::Args),
}

/// Called when writing to standard output failed: quiet exit when the reader has gone,
/// otherwise the error on stderr and exit 1.
pub(crate) fn stdout_failed(e: std::io::Error) -> ! {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        std::process::exit(0);
    }
    eprintln!("error: writing to standard output: {e}");
    std::process::exit(1);
}

/// Whether `--json` is among the arguments (for errors clap raises before parsing is done).
fn json_requested() -> bool {
    std::env::args_os()
        .skip(1)
        .take_while(|a| a != "--")
        .any(|a| a == "--json")
}

fn main() {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            use clap::error::ErrorKind::{DisplayHelp, DisplayVersion};
            if !matches!(e.kind(), DisplayHelp | DisplayVersion) && json_requested() {
                let text = e.render().to_string();
                let message = text
                    .lines()
                    .find(|l| !l.trim().is_empty())
                    .unwrap_or("bad arguments")
                    .trim_start_matches("error: ")
                    .to_owned();
                println!(
                    "{}",
                    serde_json::json!({ "error": message, "kind": "usage", "usage": text.trim_end() })
                );
                std::process::exit(2);
            }
            e.exit();
        }
    };
    let json = cli.json;
    let result = match cli.command {
        Command::Info(args) => cmd::info::run(args, json),
        Command::Demo(args) => cmd::demo::run(args, json),
        Command::Sort(args) => cmd::sort::run_sort(args, json),
        Command::Distinct(args) => cmd::sort::run_distinct(args, json),
        Command::Euler(args) => cmd::graph::run_euler(args, json),
        Command::Graph(args) => cmd::graph::run_graph(args, json),
        Command::DebruijnGraph(args) => cmd::graph::run_debruijn(args, json),
        Command::Kmers(args) => cmd::assembly::run_kmers(args, json),
        Command::Assemble(args) => cmd::assembly::run_assemble(args, json),
        Command::Query(args) => cmd::assembly::run_query(args, json),
        Command::Simulate(args) => cmd::assembly::run_simulate(args, json),
        Command::Perm(args) => cmd::perm::run(args, json),
        Command::Debruijn(args) => cmd::perm::run_debruijn(args, json),
        Command::Lap(args) => cmd::lap::run(args, json),
        Command::LapExperiment(args) => cmd::lap::run_experiment(args, json),
        Command::Kmeans(args) => cmd::kmeans::run(*args, json),
        Command::Fhn(args) => cmd::fhn::run(*args, json),
        Command::Reproduce(args) => cmd::reproduce::run(args, json),
    };
    if let Err(e) = result {
        let kind = fail::kind_of(&e);
        if kind == "broken_pipe" {
            std::process::exit(0);
        }
        if e.downcast_ref::<report::AlreadyReported>().is_some() {
            if !json {
                eprintln!("error: {e:#}");
            }
        } else if json {
            println!(
                "{}",
                serde_json::json!({ "error": format!("{e:#}"), "kind": kind })
            );
        } else {
            eprintln!("error: {e:#}");
        }
        std::process::exit(fail::exit_code(kind));
    }
}
