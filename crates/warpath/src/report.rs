//! What subcommands print: demo rows, the table, JSON, progress bars.

use std::time::Duration;

use gpu_runtime::Backend;
use indicatif::{ProgressBar, ProgressStyle};
use serde::Serialize;

/// How large the built-in inputs of `warpath demo` are.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum DemoSize {
    /// Finishes within a minute on a 2-core machine without a GPU.
    Small,
    /// Inputs large enough for the GPU to pay.
    Large,
}

/// One line of `warpath demo`: what ran, on how much, where, how long, and whether the
/// result was checked against an independent verifier.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct DemoRow {
    pub(crate) algorithm: String,
    pub(crate) n: u64,
    pub(crate) backend: Backend,
    pub(crate) seconds: f64,
    pub(crate) verified: bool,
    /// Extra information, e.g. an error message when `verified` is false.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub(crate) note: String,
}

impl DemoRow {
    /// A row for a run that finished; `verified` says whether its check passed.
    pub(crate) fn new(
        algorithm: &str,
        n: u64,
        backend: Backend,
        time: Duration,
        verified: bool,
    ) -> Self {
        DemoRow {
            algorithm: algorithm.into(),
            n,
            backend,
            seconds: time.as_secs_f64(),
            verified,
            note: String::new(),
        }
    }

    /// A row for a run that failed with an error.
    pub(crate) fn failed(algorithm: &str, n: u64, error: impl std::fmt::Display) -> Self {
        DemoRow {
            algorithm: algorithm.into(),
            n,
            backend: Backend::Cpu,
            seconds: 0.0,
            verified: false,
            note: error.to_string(),
        }
    }

    /// Adds a note (shown in the last column).
    pub(crate) fn with_note(mut self, note: impl Into<String>) -> Self {
        self.note = note.into();
        self
    }
}

/// Width of the algorithm column of the demo table.
const ALGORITHM_WIDTH: usize = 44;

/// The rows of `warpath demo`, printed one by one as they finish (unless `quiet`, e.g. under
/// `--json`, which prints them together at the end).
pub(crate) struct Rows {
    pub(crate) rows: Vec<DemoRow>,
    quiet: bool,
}

impl Rows {
    /// A sink that prints the table header now (unless `quiet`).
    pub(crate) fn new(quiet: bool) -> Self {
        if !quiet {
            println!(
                "{:<ALGORITHM_WIDTH$}  {:>12}  {:<7}  {:>10}  {:<8}  note",
                "algorithm", "n", "backend", "time", "verified"
            );
        }
        Rows {
            rows: Vec::new(),
            quiet,
        }
    }

    /// Records a finished row and prints it.
    pub(crate) fn push(&mut self, r: DemoRow) {
        if !self.quiet {
            println!(
                "{:<ALGORITHM_WIDTH$}  {:>12}  {:<7}  {:>10}  {:<8}  {}",
                r.algorithm,
                r.n,
                r.backend.to_string(),
                format_seconds(r.seconds),
                if r.verified { "yes" } else { "NO" },
                r.note
            );
        }
        self.rows.push(r);
    }
}

/// `0.000123` -> `123.0 µs`, `2.5` -> `2.500 s`.
pub(crate) fn format_seconds(s: f64) -> String {
    if s >= 1.0 {
        format!("{s:.3} s")
    } else if s >= 1e-3 {
        format!("{:.2} ms", s * 1e3)
    } else {
        format!("{:.1} µs", s * 1e6)
    }
}

/// A progress bar on stderr for long work; hidden when `quiet` (e.g. under `--json`) or when
/// stderr is not a terminal.
#[allow(dead_code)] // used by the algorithm subcommands as they are added
pub(crate) fn progress(len: u64, message: &str, quiet: bool) -> ProgressBar {
    if quiet {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(len);
    bar.set_style(
        ProgressStyle::with_template("{msg} [{elapsed_precise}] {wide_bar} {pos}/{len} ({eta})")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    bar.set_message(message.to_owned());
    bar
}

/// An error whose details the subcommand already printed (e.g. a `--json` report with
/// `"verified": false`): `main` exits non-zero without printing a second JSON object.
#[derive(Debug)]
pub(crate) struct AlreadyReported(pub(crate) String);

impl std::fmt::Display for AlreadyReported {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for AlreadyReported {}
