//! The error type of every k-means entry point.

use gpu_runtime::GpuError;

/// Why k-means could not run.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum KMeansError {
    /// `k` was 0.
    #[error("k must be at least 1")]
    ZeroClusters,
    /// More clusters than points.
    #[error("k = {k} clusters but only {n} points")]
    TooManyClusters {
        /// Clusters asked for.
        k: usize,
        /// Points in the data.
        n: usize,
    },
    /// The data has no columns.
    #[error("the data has 0 dimensions")]
    ZeroDimensions,
    /// A data value is NaN or infinite.
    #[error("data value at row {row}, column {col} is not finite ({value})")]
    NonFiniteData {
        /// Row of the bad value.
        row: usize,
        /// Column of the bad value.
        col: usize,
        /// The value.
        value: f64,
    },
    /// Two arrays that must agree in shape do not.
    #[error("{what}: expected {expected}, found {found}")]
    ShapeMismatch {
        /// Which input.
        what: &'static str,
        /// The expected size.
        expected: usize,
        /// The size found.
        found: usize,
    },
    /// A sample weight is negative, NaN or infinite, or all weights are zero.
    #[error("invalid sample weights: {0}")]
    InvalidWeights(String),
    /// A parameter is out of range (`max_iter = 0`, negative `tol`, `n_init = 0`, ...).
    #[error("invalid parameter: {0}")]
    InvalidParameter(String),
    /// Reading or writing a file failed.
    #[error("{path}: {reason}")]
    Io {
        /// The file.
        path: String,
        /// What went wrong.
        reason: String,
    },
    /// A file's contents are malformed.
    #[error("{path}: {reason}")]
    Format {
        /// The file.
        path: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A checkpoint to resume from was written by another job (other data, weights, `k`,
    /// init, seed, `tol`, given centroids, or it is past `max_iter`).
    #[error(
        "{path}: the checkpoint belongs to another job: {what}: checkpoint says {checkpoint}, this run says {run}"
    )]
    CheckpointMismatch {
        /// The checkpoint file.
        path: String,
        /// What differs (`"seed"`, `"init"`, `"n (points)"`, ...).
        what: &'static str,
        /// What the checkpoint says.
        checkpoint: String,
        /// What this run says.
        run: String,
    },
    /// The working memory a choice needs is more than the memory available.
    #[error("{what} needs {needed} bytes but only {available} are available; {hint}")]
    OutOfMemory {
        /// What needs the memory.
        what: String,
        /// Bytes needed.
        needed: u64,
        /// Bytes available (`MemAvailable`).
        available: u64,
        /// What to do instead.
        hint: &'static str,
    },
    /// The GPU path failed.
    #[error(transparent)]
    Gpu(#[from] GpuError),
    /// MPI communication failed or the job is inconsistent across ranks.
    #[error("distributed run failed: {0}")]
    Distributed(String),
}

impl KMeansError {
    pub(crate) fn io(path: &std::path::Path, e: impl std::fmt::Display) -> Self {
        KMeansError::Io {
            path: path.display().to_string(),
            reason: e.to_string(),
        }
    }

    pub(crate) fn format(path: &std::path::Path, reason: impl Into<String>) -> Self {
        KMeansError::Format {
            path: path.display().to_string(),
            reason: reason.into(),
        }
    }

    /// `Ok` when `found` is `expected`, else [`KMeansError::ShapeMismatch`] naming `what`.
    pub(crate) fn check_shape(
        what: &'static str,
        expected: usize,
        found: usize,
    ) -> Result<(), KMeansError> {
        if found == expected {
            return Ok(());
        }
        Err(KMeansError::ShapeMismatch {
            what,
            expected,
            found,
        })
    }
}
