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
    /// A color-sets file (JSON lines) has a line that is not of its format (the message says
    /// what is wrong).
    #[error("{path}: line {line}: {message}")]
    ColorSets {
        /// The file.
        path: PathBuf,
        /// 1-based number of the line.
        line: u64,
        /// What is wrong with it.
        message: String,
    },
    /// A GPU path failed, or `Exec::Cuda` was asked for where there is none.
    #[error(transparent)]
    Gpu(#[from] gpu_runtime::GpuError),
    /// A primitive (sort, distinct) failed.
    #[error(transparent)]
    Primitive(#[from] gpu_primitives::PrimitiveError),
    /// A temporary file (or an output being written) could not be created, written or read:
    /// a full disk (ENOSPC), a quota, a missing or read-only folder.
    #[error("{path}: {error}{}", disk_hint(error))]
    Disk {
        /// The file.
        path: PathBuf,
        /// What the system said.
        error: std::io::Error,
    },
    /// The temporary folder has less free space than the run is estimated to need.
    #[error(
        "{path} has {} free, and this run needs about {} of temporary files: free some \
         space or choose another folder with --temp-dir",
        human_bytes(*available),
        human_bytes(*needed)
    )]
    DiskSpace {
        /// The temporary folder.
        path: PathBuf,
        /// Bytes free there.
        available: u64,
        /// Bytes the run is estimated to need.
        needed: u64,
    },
    /// The memory bound cannot hold what the run needs (the message says what and how much).
    #[error("{0}")]
    Memory(String),
    /// The run was stopped (Ctrl-C, or the caller's cancel flag).
    #[error("interrupted")]
    Interrupted,
    /// An internal invariant failed: a bug, never the input's fault (please report it).
    #[error("internal error: {0}")]
    Internal(String),
}

/// The advice added to a disk error: where space ran out, what to do.
fn disk_hint(e: &std::io::Error) -> &'static str {
    match e.raw_os_error() {
        Some(28) => {
            " (the disk is full: free some space, or choose a folder on a larger disk with \
             --temp-dir)"
        }
        Some(122) => " (the disk quota is exhausted: choose another folder with --temp-dir)",
        _ => "",
    }
}

/// Bytes for messages: `1.5 GB`, `312 MB`, `4 KB`, `17 B` (powers of 1000).
pub(crate) fn human_bytes(b: u64) -> String {
    let units = [(1e12, "TB"), (1e9, "GB"), (1e6, "MB"), (1e3, "KB")];
    for (scale, name) in units {
        if b as f64 >= scale {
            let v = b as f64 / scale;
            return if v < 10.0 {
                format!("{v:.1} {name}")
            } else {
                format!("{v:.0} {name}")
            };
        }
    }
    format!("{b} B")
}

impl AssemblyError {
    /// A short machine-readable kind (`bad_k`, `invalid_parameter`, `io`, `reads`,
    /// `color_sets`, `gpu`, `primitive`, `disk`, `disk_space`, `memory`, `interrupted`,
    /// `internal`), as the command line's `--json` errors report.
    pub fn kind(&self) -> &'static str {
        match self {
            AssemblyError::BadK(_) => "bad_k",
            AssemblyError::InvalidParameter(_) => "invalid_parameter",
            AssemblyError::Io { .. } => "io",
            AssemblyError::Reads { .. } => "reads",
            AssemblyError::ColorSets { .. } => "color_sets",
            AssemblyError::Gpu(_) => "gpu",
            AssemblyError::Primitive(_) => "primitive",
            AssemblyError::Disk { .. } => "disk",
            AssemblyError::DiskSpace { .. } => "disk_space",
            AssemblyError::Memory(_) => "memory",
            AssemblyError::Interrupted => "interrupted",
            AssemblyError::Internal(_) => "internal",
        }
    }
}
