//! The error type of every I/O operation, with a machine-readable kind.

use std::path::PathBuf;

/// Why reading, writing or checking failed. Every variant says what and where; [`IoError::kind`]
/// gives a short stable name for machine-readable reports (`warpath --json` prints it).
#[derive(Debug, thiserror::Error)]
pub enum IoError {
    /// A text table has a bad field, a ragged row or no data where data was needed.
    #[error("{}line {line}, column {column}: {message}", path_prefix(.path))]
    Parse {
        /// The file, when reading one.
        path: Option<PathBuf>,
        /// 1-based line number.
        line: usize,
        /// 1-based column (character position of the field on its line).
        column: usize,
        /// What was wrong.
        message: String,
    },
    /// A `.npy` file that is malformed or holds a dtype or shape that cannot be read as asked.
    #[error("{}{message}", path_prefix(.path))]
    Npy {
        /// The file, when reading one.
        path: Option<PathBuf>,
        /// What was wrong.
        message: String,
    },
    /// Input or output that has the wrong form for its use (a shape, a format, an extension).
    #[error("{0}")]
    Format(String),
    /// An operating-system error on a file or a stream.
    #[error("{}: {error}", .path.as_ref().map_or("standard output".into(), |p| p.display().to_string()))]
    Io {
        /// The file (`None`: standard input or output).
        path: Option<PathBuf>,
        /// The error (shown in the message, so not a separate source in error chains).
        error: std::io::Error,
    },
    /// The request would not fit in the memory available now.
    #[error(
        "{what}: {count} {unit} need about {} of memory, {} available: at most {largest} {unit} fit",
        human_bytes(*.needed), human_bytes(*.available)
    )]
    OutOfMemory {
        /// What was asked for (e.g. `--generate`).
        what: String,
        /// The size asked for.
        count: u64,
        /// Its unit (`keys`, `nodes`, ...).
        unit: String,
        /// Bytes it needs.
        needed: u64,
        /// Bytes available now.
        available: u64,
        /// The largest count that fits.
        largest: u64,
    },
    /// The request would run for longer than allowed without `--force`.
    #[error(
        "{what} would take about {} ({how}); pass --force to run it anyway",
        human_duration(*.seconds)
    )]
    TooLong {
        /// What was asked for.
        what: String,
        /// The estimate in seconds.
        seconds: f64,
        /// How the estimate was made.
        how: String,
    },
}

fn path_prefix(p: &Option<PathBuf>) -> String {
    p.as_ref()
        .map(|p| format!("{}: ", p.display()))
        .unwrap_or_default()
}

impl IoError {
    /// A short, stable name of the error's kind: `parse`, `npy`, `format`, `io`,
    /// `broken_pipe`, `out_of_memory` or `too_long`.
    ///
    /// ```
    /// let e = warpath_io::IoError::Format("x".into());
    /// assert_eq!(e.kind(), "format");
    /// ```
    pub fn kind(&self) -> &'static str {
        match self {
            IoError::Parse { .. } => "parse",
            IoError::Npy { .. } => "npy",
            IoError::Format(_) => "format",
            IoError::Io { error, .. } if error.kind() == std::io::ErrorKind::BrokenPipe => {
                "broken_pipe"
            }
            IoError::Io { .. } => "io",
            IoError::OutOfMemory { .. } => "out_of_memory",
            IoError::TooLong { .. } => "too_long",
        }
    }

    /// Whether this is a write to a pipe whose reader has gone (`warpath ... | head`): callers
    /// end quietly.
    pub fn is_broken_pipe(&self) -> bool {
        self.kind() == "broken_pipe"
    }

    /// The same error about `path` (for errors raised while parsing bytes): parse and `.npy`
    /// errors carry it, format errors start with it.
    pub fn in_file(self, file: &std::path::Path) -> Self {
        match self {
            IoError::Parse {
                path: None,
                line,
                column,
                message,
            } => IoError::Parse {
                path: Some(file.to_owned()),
                line,
                column,
                message,
            },
            IoError::Npy {
                path: None,
                message,
            } => IoError::Npy {
                path: Some(file.to_owned()),
                message,
            },
            IoError::Format(message) => {
                let name = file.display().to_string();
                if message.starts_with(&name) {
                    IoError::Format(message)
                } else {
                    IoError::Format(format!("{name}: {message}"))
                }
            }
            other => other,
        }
    }

    pub(crate) fn io(path: Option<&std::path::Path>, error: std::io::Error) -> Self {
        IoError::Io {
            path: path.map(ToOwned::to_owned),
            error,
        }
    }
}

/// `1536` -> `1.5 KiB`; bytes as a person reads them (binary units).
///
/// ```
/// assert_eq!(warpath_io::human_bytes(3 << 30), "3.0 GiB");
/// assert_eq!(warpath_io::human_bytes(512), "512 bytes");
/// ```
pub fn human_bytes(b: u64) -> String {
    const UNITS: [&str; 6] = ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    if b < 1024 {
        return format!("{b} bytes");
    }
    let mut v = b as f64 / 1024.0;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    format!("{v:.1} {}", UNITS[u])
}

/// `90.0` -> `1.5 minutes`; a duration as a person reads it.
///
/// ```
/// assert_eq!(warpath_io::human_duration(7200.0), "2.0 hours");
/// assert_eq!(warpath_io::human_duration(3.0e9), "95.1 years");
/// ```
pub fn human_duration(s: f64) -> String {
    let table = [
        (365.25 * 86400.0, "years"),
        (86400.0, "days"),
        (3600.0, "hours"),
        (60.0, "minutes"),
    ];
    for (scale, unit) in table {
        if s >= scale {
            return format!("{:.1} {unit}", s / scale);
        }
    }
    format!("{s:.1} seconds")
}
