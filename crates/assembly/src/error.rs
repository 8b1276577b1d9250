//! The errors of the assembly pipeline.

use std::path::PathBuf;

/// What can go wrong between reads and unitigs.
#[derive(Debug, thiserror::Error)]
pub enum AssemblyError {
    /// `k` is even, below 3 or above 63.
    #[error(
        "k = {0} is not allowed: k must be odd (with an even k a k-mer can be its own reverse \
         complement, so its strand is undefined) and between 3 and 63"
    )]
    BadK(usize),
    /// A parameter out of its range (the message says which and why).
    #[error("{0}")]
    InvalidParameter(String),
    /// A reads file could not be opened or read.
    #[error("{path}: {error}")]
    Io {
        /// The file.
        path: PathBuf,
        /// What the system said.
        error: std::io::Error,
    },
    /// A reads file is not FASTA/FASTQ, is truncated, or has a malformed record.
    #[error("{path}: record {record}: {message}")]
    Reads {
        /// The file.
        path: PathBuf,
        /// 1-based number of the record where reading failed (the first record is 1).
        record: u64,
        /// needletail's description (it names the line or the record's id).
        message: String,
    },
    /// A GPU path failed, or `Exec::Cuda` was asked for where there is none.
    #[error(transparent)]
    Gpu(#[from] gpu_runtime::GpuError),
    /// A primitive (sort, distinct) failed.
    #[error(transparent)]
    Primitive(#[from] gpu_primitives::PrimitiveError),
}

impl AssemblyError {
    /// A short machine-readable kind (`bad_k`, `invalid_parameter`, `io`, `reads`, `gpu`,
    /// `primitive`), as the command line's `--json` errors report.
    pub fn kind(&self) -> &'static str {
        match self {
            AssemblyError::BadK(_) => "bad_k",
            AssemblyError::InvalidParameter(_) => "invalid_parameter",
            AssemblyError::Io { .. } => "io",
            AssemblyError::Reads { .. } => "reads",
            AssemblyError::Gpu(_) => "gpu",
            AssemblyError::Primitive(_) => "primitive",
        }
    }
}
