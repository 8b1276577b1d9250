//! Command-line options shared by `warpath kmeans` and the `kmeans-mpi` worker (feature
//! `cli`), so that both commands take a fit's start, weights and iteration limit the same way.

use std::path::PathBuf;

use crate::Init;

/// How a fit starts, what its points weigh and how long it may run: flattened into both
/// command lines (`#[command(flatten)]`).
#[derive(clap::Args, Debug, Clone)]
pub struct FitArgs {
    /// Initial centroids: k-means++ (greedy, as scikit-learn: k passes over the data),
    /// k-means|| (64 rounds of D^2 draws: about one iteration of work, for large k) or random.
    #[arg(long, default_value = "k-means++")]
    pub init: Init,
    /// Start from these centroids instead of --init: a k x d matrix, `.npy`, raw little-endian
    /// f64 (`.bin`) or a text table (warpath-io's grammar, as for the points).
    #[arg(long, value_name = "FILE", conflicts_with = "init")]
    pub init_centroids: Option<PathBuf>,
    /// Sample weights, one per point: a text file with one weight per line (an optional
    /// header), a 1-D `.npy` array (f32 or f64), or raw little-endian f64 (`.bin`).
    #[arg(long, value_name = "FILE")]
    pub weights: Option<PathBuf>,
    /// Most Lloyd iterations.
    #[arg(long, default_value_t = 300)]
    pub max_iter: usize,
}
