//! `kmeans-mpi`: the distributed k-means worker. Start it under `mpirun` (or let
//! `warpath kmeans --ranks R` do it):
//!
//! ```text
//! mpirun -n 4 kmeans-mpi data.npy --k 64 --checkpoint ck.json --out result.json
//! mpirun -n 2 kmeans-mpi data.npy --k 64 --checkpoint ck.json --out result.json --resume
//! mpirun -n 4 kmeans-mpi data.npy --k 64 --weights w.csv --init-centroids start.csv
//! ```
//!
//! `--resume` refuses a checkpoint written by another job (other data, weights, `--k`,
//! `--init`, `--seed`, `--tol`, given centroids, or past `--max-iter`), naming what differs;
//! another number of ranks is fine.

use std::path::PathBuf;

use clap::Parser;
use clustering::cli::FitArgs;
use clustering::data::read_matrix;
use clustering::distributed::{DistributedConfig, Input, run_distributed};
use clustering::launch::BAD_JOB_EXIT_CODE;
use clustering::{Algorithm, Init, KMeans};
use mpi::topology::SimpleCommunicator;
use mpi::traits::Communicator;

/// Distributed k-means worker (one process per MPI rank).
#[derive(Parser)]
#[command(name = "kmeans-mpi")]
struct Args {
    /// Input: a 2-D `.npy` file (f32 or f64), or raw little-endian f64 rows with `--dim`.
    input: PathBuf,
    /// Columns of a raw f64 input (required for raw files, ignored for .npy).
    #[arg(long)]
    dim: Option<usize>,
    /// Number of clusters.
    #[arg(long)]
    k: usize,
    /// The start, the weights and the iteration limit (as `warpath kmeans` takes them).
    #[command(flatten)]
    fit: FitArgs,
    /// Tolerance relative to the mean column variance.
    #[arg(long, default_value_t = 1e-4)]
    tol: f64,
    /// Seed of the initialisation.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// How each rank assigns its points: auto, lloyd, hamerly, yinyang or elkan (each rank
    /// keeps the bounds of its own rows; the result does not depend on it).
    #[arg(long, default_value = "auto")]
    algorithm: Algorithm,
    /// Checkpoint file (written atomically by rank 0 after every iteration).
    #[arg(long)]
    checkpoint: Option<PathBuf>,
    /// Continue from the checkpoint when it exists.
    #[arg(long)]
    resume: bool,
    /// Write the report (JSON) here.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Write the labels here, one per line.
    #[arg(long)]
    labels: Option<PathBuf>,
}

fn main() {
    let args = Args::parse();
    let Some(universe) = mpi::initialize() else {
        eprintln!("kmeans-mpi: MPI was already initialised");
        std::process::exit(2);
    };
    let world = universe.world();
    let input = match (args.input.extension().and_then(|e| e.to_str()), args.dim) {
        (Some("npy"), _) => Input::Npy(args.input.clone()),
        (_, Some(dim)) => Input::RawF64 {
            path: args.input.clone(),
            dim,
        },
        _ => {
            if world.rank() == 0 {
                eprintln!("kmeans-mpi: a raw input needs --dim (or use a .npy file)");
            }
            std::process::exit(BAD_JOB_EXIT_CODE);
        }
    };
    let init = match &args.fit.init_centroids {
        Some(p) => match read_matrix(p) {
            Ok(c) => Init::Given(c),
            Err(e) => {
                // Other ranks may already be waiting in a collective.
                refuse_job(&world, &e.to_string());
            }
        },
        None => args.fit.init,
    };
    let cfg = DistributedConfig {
        input,
        weights: args.fit.weights,
        params: KMeans::new(args.k)
            .init(init)
            .max_iter(args.fit.max_iter)
            .tol(args.tol)
            .seed(args.seed)
            .algorithm(args.algorithm),
        checkpoint: args.checkpoint,
        resume: args.resume,
        output: args.out,
        labels: args.labels,
    };
    match run_distributed(&world, &cfg) {
        Ok(Some(report)) => match serde_json::to_string(&report) {
            Ok(s) => println!("{s}"),
            Err(e) => eprintln!("kmeans-mpi: {e}"),
        },
        Ok(None) => {}
        Err(e) => {
            // Other ranks may be waiting in a collective: take the whole job down (and tell
            // the launcher that a relaunch would fail the same way).
            refuse_job(&world, &e.to_string());
        }
    }
}

/// Says why on stderr and aborts the whole job with [`BAD_JOB_EXIT_CODE`]. The pause lets
/// mpirun forward the message before the abort tears the job down: without it the launcher
/// sometimes saw only mpirun's own abort text, not the reason.
fn refuse_job(world: &SimpleCommunicator, why: &str) -> ! {
    eprintln!("kmeans-mpi (rank {}): {why}", world.rank());
    let _ = std::io::Write::flush(&mut std::io::stderr());
    std::thread::sleep(std::time::Duration::from_millis(200));
    world.abort(BAD_JOB_EXIT_CODE)
}
