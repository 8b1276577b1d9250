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
    /// k-means clustering of a CSV/.npy file or generated points (CPU, GPU or MPI).
    Kmeans(Box<cmd::kmeans::Args>),
    /// Run every algorithm on a built-in input, verify each result, print a table.
    Demo(cmd::demo::Args),
}

fn main() {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Info(args) => cmd::info::run(args, cli.json),
        Command::Demo(args) => cmd::demo::run(args, cli.json),
        Command::Kmeans(args) => cmd::kmeans::run(*args, cli.json),
    };
    if let Err(e) = result {
        if cli.json {
            println!("{}", serde_json::json!({ "error": format!("{e:#}") }));
        } else {
            eprintln!("error: {e:#}");
        }
        std::process::exit(1);
    }
}
